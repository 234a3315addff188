/**
 * One timer per request, restarted while we wait on the upstream and ignored while we wait on the
 * client (a slow reader is backpressure, not a silent upstream). Shared by both proxy paths.
 */
export class SilenceTimer {
  #waiting = false;
  #fired = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #ms: number;
  readonly #onSilence: () => void;

  constructor(ms: number, onSilence: () => void) {
    this.#ms = ms;
    this.#onSilence = onSilence;
  }

  get fired(): boolean {
    return this.#fired;
  }

  arm(): void {
    this.#waiting = true;
    if (this.#timer !== undefined) {
      this.#timer.refresh();
      return;
    }
    this.#timer = setTimeout(() => {
      if (!this.#waiting) return;
      this.#fired = true;
      this.#onSilence();
    }, this.#ms);
    this.#timer.unref(); // the server keeps the process alive, not a pending request's timer
  }

  disarm(): void {
    this.#waiting = false;
  }

  stop(): void {
    this.#waiting = false;
    clearTimeout(this.#timer);
  }
}
