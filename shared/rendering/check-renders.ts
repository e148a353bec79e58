/**
 * The check that what is saved can be sent: a subject and content written
 * on a campaign, a template or a sequence's step must parse and render with
 * sample values, so that what cannot render is refused when it is saved (a
 * 400 naming the field, before anything is stored), not when an email
 * should go out.
 */
import { analyzeTemplate, renderTemplate, renderText } from './engine.ts';
import { SAMPLE_VALUES } from './variables.ts';

/** How the errors about a subject name it: its field, and in words. */
export interface SubjectNames {
  field: string;
  what: string;
}

/** A campaign's or a step's subject: `subject`. */
const SUBJECT: SubjectNames = { field: 'subject', what: 'subject' };

/** What `checkRenders` is told besides the parts. */
export interface RenderCheckOptions {
  /** How the errors name the subject (default: `subject`). */
  subject?: SubjectNames;
  /**
   * The caller has already analysed the parts (`analyzeTemplate`, as a
   * template's view does), so they are only rendered: a large content is
   * not parsed and analysed twice.
   */
  analysed?: boolean;
}

/**
 * Checks the parts given (a part left undefined is not checked): the
 * subject, then the content, each analysed (parsed, within the engine's
 * limits) and rendered with sample values. What fails is a
 * `ValidationError` naming the part's field.
 */
export const checkRenders = async (
  parts: { subject?: string; content?: string },
  { subject = SUBJECT, analysed = false }: RenderCheckOptions = {},
): Promise<void> => {
  if (parts.subject !== undefined) {
    if (!analysed) {
      await analyzeTemplate(parts.subject, subject.field, subject.what);
    }
    await renderText(parts.subject, SAMPLE_VALUES, subject.what, subject.field);
  }
  if (parts.content !== undefined) {
    if (!analysed) await analyzeTemplate(parts.content);
    await renderTemplate(parts.content, SAMPLE_VALUES);
  }
};
