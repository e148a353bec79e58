/**
 * Driven adapter: templates in their organization's partition; the
 * organization's template counter gives the total of GET /templates.
 */
import {
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { entityType, itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import type { Template, TemplateSummary } from '../../templates/model.ts';
import type { TemplateRepository } from '../../templates/ports.ts';
import {
  type DynamoTable,
  failedConditions,
  isConditionFailure,
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-table.ts';

const toItem = (orgId: string, template: Template) => ({
  ...keys.template(orgId, template.id),
  ...entityType('Template'),
  ...template,
});

const summaryEntries = {
  id: v.string(),
  name: v.string(),
  defaultSubject: v.string(),
  createdAt: v.string(),
  updatedAt: v.string(),
};

/** A template as list rows read it: projected, without its HTML. */
const TemplateSummaryItem = itemSchema('Template', summaryEntries);

const TemplateItem = itemSchema('Template', {
  ...summaryEntries,
  content: v.string(),
});

const notFound = (templateId: string, cause?: unknown) =>
  new NotFoundError('template.notFound', `No template ${templateId}`, {
    cause,
  });

/** Templates and the organization's template counter. */
export class DynamoTemplateRepository implements TemplateRepository {
  constructor(private readonly table: DynamoTable) {}

  async create(orgId: string, template: Template): Promise<void> {
    const { tableName: TableName } = this.table;
    await this.table.client.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName,
              Item: toItem(orgId, template),
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          moveCollectionCounter(
            this.table,
            keys.templatesOfOrganization(orgId),
            1,
          ),
        ],
      }),
    );
  }

  async get(orgId: string, templateId: string): Promise<Template | undefined> {
    const { Item } = await this.table.client.send(
      new GetCommand({
        TableName: this.table.tableName,
        Key: keys.template(orgId, templateId),
        ConsistentRead: true,
      }),
    );
    return Item ? parseItem(TemplateItem, Item) : undefined;
  }

  async update(orgId: string, template: Template): Promise<void> {
    try {
      await this.table.client.send(
        new PutCommand({
          TableName: this.table.tableName,
          Item: toItem(orgId, template),
          ConditionExpression: 'attribute_exists(PK)',
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw notFound(template.id, error);
      throw error;
    }
  }

  async delete(orgId: string, templateId: string): Promise<void> {
    const { tableName: TableName } = this.table;
    try {
      await this.table.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Delete: {
                TableName,
                Key: keys.template(orgId, templateId),
                ConditionExpression: 'attribute_exists(PK)',
              },
            },
            moveCollectionCounter(
              this.table,
              keys.templatesOfOrganization(orgId),
              -1,
            ),
          ],
        }),
      );
    } catch (error) {
      if (failedConditions(error)?.includes(0))
        throw notFound(templateId, error);
      throw error;
    }
  }

  async page(
    orgId: string,
    request: PageRequest,
  ): Promise<Page<TemplateSummary>> {
    // Rows carry no HTML: read the summary attributes only.
    const page = await pageOfCollection(
      this.table,
      keys.templatesOfOrganization(orgId),
      request,
      {
        projection: {
          expression: 'PK, SK, id, #name, defaultSubject, createdAt, updatedAt',
          names: { '#name': 'name' },
        },
      },
    );
    return {
      items: page.items.map((item) => parseItem(TemplateSummaryItem, item)),
      total: page.total,
    };
  }
}
