/**
 * The name of the `problemDetails` hapi plugin of tracewire/errors, which is also where it notes the
 * problem document it sent for a request (`request.plugins[PROBLEM_DETAILS_PLUGIN]`). Defined here
 * so that the tracing plugin can read the `type` sent without depending on the errors component.
 */
export const PROBLEM_DETAILS_PLUGIN = 'tracewire-problem-details';

/** What the plugin notes of the problem document it sent: the `type` both sides of a trace can name. */
export interface SentProblem {
    readonly type: string;
}
