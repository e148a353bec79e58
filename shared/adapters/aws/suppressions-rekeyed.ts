/**
 * The marker saying an organization's suppressions are all keyed by address
 * key (`keys.suppressionsRekeyed`): written by the rekey once it moved the
 * last suppression stored by address, and with every organization created
 * since (it has none stored the old way). Apart from the delivery store so
 * that the organizations' store writes it without loading that one.
 */
import * as v from 'valibot';
import { itemSchema } from '../../db/items.ts';

/** The marker item: when it was written. */
export const SuppressionsRekeyedItem = itemSchema('SuppressionsRekeyed', {
  at: v.string(),
});
