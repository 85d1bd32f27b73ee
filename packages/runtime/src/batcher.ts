export interface BatcherOptions<In, Out> {
  /** Runs one batch and answers each input, in order; an Error answers its input alone. */
  run: (inputs: In[]) => Promise<Array<Out | Error>>;
  /** At most this many inputs per batch; a full batch goes at once. */
  maxSize: number;
  /** Inputs with the same key never share a batch: the later one goes in the next. Null: no key. */
  keyOf?: (input: In) => string | null;
  /**
   * While a batch runs, the next one gathers until that run ends (or `maxWaitMs` after its first
   * input, or it is full) rather than going at the end of the turn: the inputs arriving meanwhile
   * share one run instead of queueing behind each other. Unset, every turn's inputs run at once.
   */
  gatherWhileRunning?: { maxWaitMs: number };
}

interface Waiting<In, Out> {
  input: In;
  resolve: (output: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * A micro-batcher: the inputs submitted within one turn of the event loop run together (one Redis
 * script, one SQL statement), so work is paid per turn, not per call. Each caller's promise settles
 * with its own answer once its batch has run. The only state is the batch gathering in this process.
 */
export class Batcher<In, Out> {
  private gathering: Waiting<In, Out>[] = [];
  private gatheringKeys = new Set<string>();
  /** Inputs whose key the gathering batch already holds: they start the next one. */
  private deferred: Waiting<In, Out>[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private running = 0;

  constructor(private readonly options: BatcherOptions<In, Out>) {}

  submit(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => this.add({ input, resolve, reject }));
  }

  private add(waiting: Waiting<In, Out>): void {
    const key = this.options.keyOf?.(waiting.input) ?? null;
    if (key !== null) {
      if (this.gatheringKeys.has(key)) {
        this.deferred.push(waiting);
        return;
      }
      this.gatheringKeys.add(key);
    }
    this.gathering.push(waiting);
    if (this.gathering.length >= this.options.maxSize) this.flush();
    else if (this.gathering.length === 1) this.schedule();
  }

  private schedule(): void {
    const gather = this.options.gatherWhileRunning;
    if (gather && this.running > 0) this.timer = setTimeout(() => this.flush(), gather.maxWaitMs);
    else this.immediate = setImmediate(() => this.flush());
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
    const batch = this.gathering;
    const deferred = this.deferred;
    this.gathering = [];
    this.gatheringKeys = new Set();
    this.deferred = [];
    for (const waiting of deferred) this.add(waiting);
    if (batch.length === 0) return;
    this.running += 1;
    void this.runBatch(batch).finally(() => {
      this.running -= 1;
      // A batch gathered behind this run goes now that it has ended.
      if (this.options.gatherWhileRunning && this.running === 0 && this.gathering.length > 0) this.flush();
    });
  }

  private async runBatch(batch: Waiting<In, Out>[]): Promise<void> {
    try {
      const outputs = await this.options.run(batch.map((waiting) => waiting.input));
      for (const [i, waiting] of batch.entries()) {
        const output = outputs[i] as Out | Error;
        if (output instanceof Error) waiting.reject(output);
        else waiting.resolve(output);
      }
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}
