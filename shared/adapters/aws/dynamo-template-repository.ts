/**
 * Driven adapter: templates in their organization's partition; the
 * organization's template counter gives the total of GET /templates.
 */
import * as v from 'valibot';
import { itemSchema, parseItem } from '../../db/items.ts';
import { keys } from '../../db/keys.ts';
import { NotFoundError } from '../../errors.ts';
import type { Page, PageRequest } from '../../ports.ts';
import type { Template, TemplateSummary } from '../../templates/model.ts';
import type { TemplateRepository } from '../../templates/ports.ts';
import {
  moveCollectionCounter,
  pageOfCollection,
} from './dynamo-collections.ts';
import { entity } from './dynamo-entity.ts';
import { type DynamoTable, transactWrite } from './dynamo-table.ts';

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

const notFound = (templateId: string) => (cause: unknown) =>
  new NotFoundError('template.notFound', `No template ${templateId}`, {
    cause,
  });

/** Templates and the organization's template counter. */
export class DynamoTemplateRepository implements TemplateRepository {
  private readonly templates;

  constructor(private readonly table: DynamoTable) {
    this.templates = entity(table, TemplateItem);
  }

  async create(orgId: string, template: Template): Promise<void> {
    await transactWrite(this.table, [
      this.templates.putTx(keys.template(orgId, template.id), template, {
        if: (w) => w.missing(),
      }),
      moveCollectionCounter(this.table, keys.templatesOfOrganization(orgId), 1),
    ]);
  }

  get(orgId: string, templateId: string): Promise<Template | undefined> {
    return this.templates.get(keys.template(orgId, templateId), {
      consistent: true,
    });
  }

  async update(orgId: string, template: Template): Promise<void> {
    await this.templates.put(keys.template(orgId, template.id), template, {
      if: (w) => w.exists(),
      otherwise: notFound(template.id),
    });
  }

  async delete(orgId: string, templateId: string): Promise<void> {
    await transactWrite(this.table, [
      this.templates.deleteTx(keys.template(orgId, templateId), {
        if: (w) => w.exists(),
        otherwise: notFound(templateId),
      }),
      moveCollectionCounter(
        this.table,
        keys.templatesOfOrganization(orgId),
        -1,
      ),
    ]);
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
        project: Object.keys(summaryEntries),
      },
    );
    return {
      items: page.items.map((item) => parseItem(TemplateSummaryItem, item)),
      total: page.total,
    };
  }
}
