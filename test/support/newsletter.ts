/**
 * A realistic newsletter of about 15 KB for the composer's benchmark and
 * its equality tests: a layout table, a header image, headings, eleven
 * articles with images and links, a list, a few merge values, the
 * unsubscribe and topic opt-out links and the postal address.
 */

const article = (n: number) => `
<tr><td style="padding:24px 32px;border-bottom:1px solid #e5e5e5">
  <h2 style="font-family:Georgia,serif;font-size:22px;color:#1a1a1a;margin:0 0 12px">Story ${n}: what changed in our warehouse this month</h2>
  <img src="https://cdn.acme.test/newsletter/2026-11/story-${n}.jpg" alt="Photo for story ${n}" width="536" height="240" style="display:block;width:100%;height:auto;border:0">
  <p style="font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px;color:#333333">
    We moved the packing line closer to the loading bay, which cut the walk for every parcel by
    forty metres. Orders placed before noon now leave the same day, and returns are processed
    within two working days instead of five. Thank you for your patience while we rebuilt things.
  </p>
  <p style="font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px;color:#333333">
    <a href="https://www.acme.test/blog/2026/11/story-${n}?utm_source=newsletter&amp;utm_medium=email&amp;utm_campaign=november" style="color:#0b5fff;text-decoration:underline">Read the whole story</a>
    &nbsp;&middot;&nbsp;
    <a href="https://www.acme.test/shop/collection-${n}" style="color:#0b5fff">Shop the collection</a>
  </p>
</td></tr>`;

/** The newsletter's HTML (Liquid source). */
export const NEWSLETTER_HTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Acme News — November</title>
<style>body{margin:0;padding:0}table{border-collapse:collapse}a{color:#0b5fff}@media (max-width:600px){.wrap{width:100%!important}}</style>
</head>
<body style="background:#f4f4f4;margin:0;padding:0">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f4f4f4"><tr><td align="center">
<table role="presentation" class="wrap" width="600" cellpadding="0" cellspacing="0" border="0" style="background:#ffffff;width:600px">
<tr><td style="padding:24px 32px"><a href="https://www.acme.test/"><img src="https://cdn.acme.test/logo.png" alt="Acme" width="120" height="40" style="border:0"></a></td></tr>
<tr><td style="padding:0 32px">
  <h1 style="font-family:Georgia,serif;font-size:28px;color:#1a1a1a">November at Acme</h1>
  <p style="font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px;color:#333333">Hi {{ firstName }},</p>
  <p style="font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px;color:#333333">
    Here is what happened this month, and what is coming before the holidays. As a reader of this
    newsletter you get early access to the winter sale: it opens on the 1st for you, a week before
    everyone else.
  </p>
  <ul style="font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px;color:#333333">
    <li>Same-day dispatch for orders placed before noon</li>
    <li>Free returns for thirty days, now on every order</li>
    <li>A new store in Springfield, opening on the 12th</li>
  </ul>
</td></tr>
${[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map(article).join('')}
<tr><td style="padding:24px 32px;font-family:Helvetica,Arial,sans-serif;font-size:12px;line-height:18px;color:#777777">
  <p>You receive this email as {{ email }} because you subscribed on acme.test.
  <a href="{{ unsubscribeUrl }}" style="color:#777777">Unsubscribe</a> or
  <a href="{{ topicOptOutUrl }}" style="color:#777777">receive fewer emails like this</a>.</p>
  <p>{{ postalAddress }}<br>&copy; {{ currentYear }} Acme Ltd. All rights reserved.</p>
</td></tr>
</table>
</td></tr></table>
</body></html>
`;

/** A tiny template: a greeting, one line and the unsubscribe link. */
export const TINY_HTML =
  '<p>Hi {{ firstName }},</p><p>Our sale starts tomorrow.</p><p><a href="{{ unsubscribeUrl }}">Unsubscribe</a></p>';
