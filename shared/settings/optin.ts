/**
 * Double opt-in settings of an organization, and the confirmation email
 * every organization starts with.
 */
import * as v from 'valibot';

/** The organization's double opt-in settings. */
export const OptinSettings = v.pipe(
  v.object({
    required: v.pipe(
      v.boolean(),
      v.description(
        'When true, every add of one contact goes through double opt-in (`doubleOptIn: false` then changes nothing)',
      ),
    ),
    subject: v.pipe(
      v.string(),
      v.description('Subject of the confirmation email (Liquid)'),
    ),
    content: v.pipe(
      v.string(),
      v.description(
        'HTML of the confirmation email (Liquid), the default one while not customized',
      ),
    ),
    customized: v.pipe(
      v.boolean(),
      v.description(
        'False while the stored content is empty: the organization follows the default confirmation email',
      ),
    ),
  }),
  v.title('OptinSettings'),
);
export type OptinSettings = v.InferOutput<typeof OptinSettings>;

/** Subject of the default confirmation email. */
export const DEFAULT_OPTIN_SUBJECT = 'Please confirm your subscription';

/** HTML of the default confirmation email (Liquid variables). */
export const DEFAULT_OPTIN_CONTENT = `<!doctype html>
<html>
  <body style="font-family: Arial, Helvetica, sans-serif; color: #222; line-height: 1.5;">
    <p>Hello{% if firstName %} {{firstName}}{% endif %},</p>
    <p>Please confirm that you want to receive our emails at {{email}}:</p>
    <p>
      <a href="{{confirmationUrl}}"
         style="display: inline-block; padding: 10px 18px; background: #1a73e8; color: #fff; text-decoration: none; border-radius: 4px;">
        Yes, subscribe me
      </a>
    </p>
    <p>If you did not ask for this, ignore this email: you will not be subscribed.</p>
    {% if postalAddress %}<p style="font-size: 12px; color: #777;">{{postalAddress}}</p>{% endif %}
    <p style="font-size: 12px; color: #777;">&copy; {{currentYear}}</p>
  </body>
</html>
`;

/** The settings of an organization that never changed them. */
export const DEFAULT_OPTIN_SETTINGS: OptinSettings = {
  required: false,
  subject: DEFAULT_OPTIN_SUBJECT,
  content: DEFAULT_OPTIN_CONTENT,
  customized: false,
};
