// A running node's log: every line goes to its file under the cache's logs/, to the progress display, and
// into a short tail that a failure shows. Details only a fix needs (a stack) go to the file alone, so that
// the terminal keeps one line per problem.
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/** How many of the last lines a failure carries. */
const TAIL_LINES = 20;

export class NodeLog {
  readonly tail: string[] = [];

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
    private readonly show: (line: string) => void,
  ) {}

  /** Starts the node's log afresh at `path`; `show` receives each line as it is written. */
  static async open(path: string, show: (line: string) => void): Promise<NodeLog> {
    await mkdir(dirname(path), { recursive: true });
    return new NodeLog(path, createWriteStream(path, { flags: 'w' }), show);
  }

  readonly line = (text: string): void => {
    this.stream.write(text + '\n');
    this.tail.push(text);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    this.show(text);
  };

  /** Text for the file only: neither the tail nor the display shows it. */
  detail(text: string): void {
    this.stream.write(text.endsWith('\n') ? text : text + '\n');
  }

  close(): Promise<void> {
    return new Promise<void>((done) => this.stream.end(done));
  }
}
