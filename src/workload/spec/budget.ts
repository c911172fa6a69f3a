/**
 * What one spec generation may materialise and draw, so that a workload nothing bounds in practice (a
 * single session of a billion rounds, a cohort of a million members without a request cap) ends with a
 * {@link LimitError} naming the cause instead of exhausting memory or running for hours.
 */
import { LIMITS, LimitError, grouped } from '../../domain/limits.js';

export class GenerationBudget {
  private requests = 0;
  private tokens = 0;
  private drawnRounds = 0;

  /** Requests materialised so far (what generation cost, for tests and diagnostics). */
  get materialized(): number {
    return this.requests;
  }

  constructor(private readonly limits: Pick<typeof LIMITS, 'requests' | 'workloadTokens' | 'drawnSessionRounds'> = LIMITS) {}

  /** Counts one materialised request of `tokens` token ids (input + output). */
  request(tokens: number, client: string): void {
    this.requests++;
    this.tokens += tokens;
    if (this.requests > this.limits.requests) {
      throw new LimitError(`the workload generates more than ${grouped(this.limits.requests)} requests (client "${client}" was generating when the limit was reached; docs/usage.md, Limits); set num_requests (or --num-requests), a shorter horizon, or lower rates`);
    }
    if (this.tokens > this.limits.workloadTokens) {
      throw new LimitError(`the workload's requests hold more than ${grouped(this.limits.workloadTokens)} token ids (client "${client}" was generating when the limit was reached; docs/usage.md, Limits); set num_requests (or --num-requests), a shorter horizon, or shorter lengths`);
    }
  }

  /** Counts one session round drawn only to keep the client's random stream aligned (not kept). */
  drawnRound(client: string): void {
    if (++this.drawnRounds > this.limits.drawnSessionRounds) {
      throw new LimitError(`client "${client}" draws more than ${grouped(this.limits.drawnSessionRounds)} session rounds that no request keeps (rounds past the horizon, drawn so that the next session gets the reference's random numbers; docs/usage.md, Limits); lower reasoning.multi_turn.max_rounds or set num_requests`);
    }
  }
}
