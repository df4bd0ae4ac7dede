// A counting semaphore: at most `n` holders at once, first come first served.
export class Semaphore {
  private active = 0;
  private queue: Array<() => void> = [];
  constructor(private readonly n: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}
