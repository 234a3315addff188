/**
 * What repair writes as the result of a call that never got one (policy unanswered: 'synthesize'),
 * in every wire format: an error result, so the model knows the call did not run to completion.
 */
export const SYNTHETIC_RESULT =
  'Error: this tool call did not complete, so it has no result (the run was interrupted, crashed or cancelled before the tool answered). Decide what to do next: retry the call if it is still needed.';
