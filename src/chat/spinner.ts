const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const PLAIN_FRAMES = ['-', '\\', '|', '/'];

export interface Spinner {
  start(label: string): void;
  /** Erases the spinner's line; safe to call when it is not running. */
  stop(): void;
  readonly running: boolean;
}

/** A one-line spinner drawn with carriage returns; on output that is not a terminal it draws nothing. */
export function createSpinner(
  output: { write(text: string): unknown },
  options: { enabled: boolean; unicode: boolean; intervalMs?: number },
): Spinner {
  const frames = options.unicode ? FRAMES : PLAIN_FRAMES;
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  let label = '';
  const draw = (): void => {
    output.write(`\r${frames[frame % frames.length]} ${label}\x1b[K`);
    frame += 1;
  };
  return {
    start(text) {
      if (!options.enabled) return;
      label = text;
      if (timer !== undefined) return;
      frame = 0;
      draw();
      timer = setInterval(draw, options.intervalMs ?? 80);
      timer.unref();
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      output.write('\r\x1b[K');
    },
    get running() {
      return timer !== undefined;
    },
  };
}
