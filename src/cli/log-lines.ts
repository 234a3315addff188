/**
 * JSON log lines written together: every line logged in one turn of the event loop goes out in
 * one write at the end of that turn (`setImmediate`), not one write (a system call, for a file or
 * a pipe) per line. Under load a proxy ends dozens of requests per turn. A process killed with
 * SIGKILL loses at most the lines of the turn it was in; `flush` writes them at once (call it
 * before exiting).
 */
export interface LogLines {
  line(entry: unknown): void;
  flush(): void;
}

export function createLogLines(sink: { write(text: string): unknown }): LogLines {
  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    sink.write(text);
  };
  return {
    line(entry) {
      pending += `${JSON.stringify(entry)}\n`;
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
