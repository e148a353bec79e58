/**
 * The queue of journeys: every message that moves a sequence or a series
 * (a step falling due, a resume, a cleanup after a delete, a series step's
 * fire) goes to the `steps` consumer group, by a one-shot schedule or sent
 * directly.
 */

/** The `steps` consumer group's queue. */
export const STEPS_QUEUE = 'steps';
