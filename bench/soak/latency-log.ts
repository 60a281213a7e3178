/** Latencies and errors of one reporting period, by request kind. */
export class LatencyLog {
  private readonly samples = new Map<string, number[]>();
  private readonly errorMessages = new Map<string, number>();
  private count = 0;

  record(kind: string, ms: number, error: string | null): void {
    this.count++;
    if (error) {
      this.errorMessages.set(`${kind}: ${error}`, (this.errorMessages.get(`${kind}: ${error}`) ?? 0) + 1);
      return;
    }
    const list = this.samples.get(kind);
    if (list) list.push(ms);
    else this.samples.set(kind, [ms]);
  }

  total(): number {
    return this.count;
  }

  errors(): number {
    let sum = 0;
    for (const n of this.errorMessages.values()) sum += n;
    return sum;
  }

  errorSample(): string {
    return [...this.errorMessages]
      .slice(0, 3)
      .map(([m, n]) => `${n}x ${m}`)
      .join('; ');
  }

  /** The p-th percentile in ms of one kind, or of all kinds when `kind` is null. */
  percentile(kind: string | null, p: number): number {
    const values = (kind ? (this.samples.get(kind) ?? []) : [...this.samples.values()].flat()).sort(
      (a, b) => a - b,
    );
    if (values.length === 0) return 0;
    return values[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
  }
}
