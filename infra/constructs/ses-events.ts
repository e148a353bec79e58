/**
 * Infrastructure. Where SES's email events start. Every tenant's
 * configuration set publishes them to the account's default event bus (the
 * provider adapter makes those sets at run time); mail sent outside a
 * tenant (the application's address, test sends) names the application's
 * configuration set, made here, which publishes to the same bus. From the
 * bus, the rule of the consumer that subscribes to them (its declared
 * `events`) sends each one to its queue.
 *
 * Not a construct of its own: it builds into the stack's scope, under the
 * ids its resources had before it was written, so that neither the set nor
 * its destination is replaced (mail naming the set would fail meanwhile).
 */
import { Aws } from 'aws-cdk-lib';
import {
  CfnConfigurationSet,
  CfnConfigurationSetEventDestination,
} from 'aws-cdk-lib/aws-ses';
import type { Construct } from 'constructs';
import {
  PUBLISHED_EVENT_TYPES,
  SES_EVENT_DESTINATION,
  type TrackingDomain,
} from '../../shared/adapters/aws/ses-email-provider.ts';

/** Props of {@link SesEvents}. */
export interface SesEventsProps {
  /** The operator's open and click tracking domain, if any. */
  tracking?: TrackingDomain | undefined;
}

/** The application's configuration set and its event destination. */
export class SesEvents {
  readonly configurationSet: CfnConfigurationSet;
  /** The set's name, which the functions name in the mail they send. */
  readonly configurationSetName: string;

  constructor(scope: Construct, props: SesEventsProps) {
    const { tracking } = props;
    this.configurationSet = new CfnConfigurationSet(
      scope,
      'ApplicationConfigurationSet',
      tracking
        ? {
            trackingOptions: {
              customRedirectDomain: tracking.domain,
              httpsPolicy: tracking.httpsPolicy,
            },
          }
        : {},
    );
    this.configurationSetName = this.configurationSet.ref;
    const destination = new CfnConfigurationSetEventDestination(
      scope,
      'ApplicationEvents',
      {
        configurationSetName: this.configurationSetName,
        eventDestination: {
          name: SES_EVENT_DESTINATION,
          enabled: true,
          // CloudFormation names the types in camel case (`deliveryDelay`).
          matchingEventTypes: PUBLISHED_EVENT_TYPES.map((type) =>
            type
              .toLowerCase()
              .replace(/_(\w)/g, (_, c: string) => c.toUpperCase()),
          ),
          eventBridgeDestination: {
            eventBusArn: `arn:${Aws.PARTITION}:events:${Aws.REGION}:${Aws.ACCOUNT_ID}:event-bus/default`,
          },
        },
      },
    );
    destination.addDependency(this.configurationSet);
  }
}
