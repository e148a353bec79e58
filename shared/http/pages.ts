/**
 * The small HTML pages of the public endpoints (confirmation, errors),
 * rendered by the one rendering engine, so every value is escaped.
 */
import { renderTemplate } from '../rendering/engine.ts';

const LAYOUT = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>{{ title }}</title>
    <style>
      body { font-family: system-ui, Arial, sans-serif; background: #f6f7f9; color: #1f2328; margin: 0; }
      main { max-width: 32rem; margin: 12vh auto; background: #fff; padding: 2rem 2.5rem; border-radius: 8px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
      h1 { font-size: 1.4rem; margin-top: 0; }
      p { line-height: 1.5; }
    </style>
  </head>
  <body>
    <main>
      <h1>{{ heading }}</h1>
      {% for paragraph in paragraphs %}<p>{{ paragraph }}</p>{% endfor %}
      {% if form %}
      <form method="post"{% if form.query %} action="?{{ form.query }}"{% endif %}>
        {% for field in form.fields %}<input type="hidden" name="{{ field[0] }}" value="{{ field[1] }}">{% endfor %}
        <button type="submit" style="font-size: 1rem; padding: .6rem 1.2rem; border: 0; border-radius: 4px; background: #1a73e8; color: #fff; cursor: pointer;">{{ form.button }}</button>
      </form>
      {% endif %}
    </main>
  </body>
</html>
`;

/** A one-button form that posts back to the page's own address. */
export interface PageForm {
  button: string;
  fields: Record<string, string>;
  /**
   * The query string it posts with instead of the page's own (the same
   * path): to tell its POST from another one to the same link.
   */
  query?: Record<string, string>;
}

/**
 * Renders a page with a heading, paragraphs of plain text and, optionally, a
 * one-button form posting to the same address (or the same path with the
 * form's own query).
 */
export const renderPage = (page: {
  title: string;
  heading: string;
  paragraphs: string[];
  form?: PageForm;
}): Promise<string> =>
  renderTemplate(
    LAYOUT,
    {
      ...page,
      form: page.form && {
        button: page.form.button,
        fields: Object.entries(page.form.fields),
        ...(page.form.query
          ? { query: new URLSearchParams(page.form.query).toString() }
          : {}),
      },
    },
    'page',
  );
