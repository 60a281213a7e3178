/**
 * Live-stream slots per credential and per organization, so that one credential (or one tenant) cannot
 * take every stream the process serves (MERIDIAN_UNS_STREAM_MAX). Counted per process, like that cap.
 */
export class StreamSlots {
  private readonly byCredential = new Map<string, number>();
  private readonly byOrganization = new Map<string, number>();

  constructor(
    private readonly maxPerCredential: number,
    private readonly maxPerOrganization: number,
  ) {}

  /**
   * Takes a slot for a stream of `credential` in `organizationId`; answers the release (call it once,
   * when the stream ends), or the reason the slot is refused.
   */
  take(credential: string, organizationId: string): (() => void) | string {
    const ofCredential = this.byCredential.get(credential) ?? 0;
    if (ofCredential >= this.maxPerCredential) {
      return `this credential already holds ${this.maxPerCredential} live streams (MERIDIAN_UNS_STREAM_MAX_PER_CREDENTIAL); close one or try again later`;
    }
    const ofOrganization = this.byOrganization.get(organizationId) ?? 0;
    if (ofOrganization >= this.maxPerOrganization) {
      return `this organization already holds ${this.maxPerOrganization} live streams (MERIDIAN_UNS_STREAM_MAX_PER_ORGANIZATION); try again later`;
    }
    this.byCredential.set(credential, ofCredential + 1);
    this.byOrganization.set(organizationId, ofOrganization + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      decrement(this.byCredential, credential);
      decrement(this.byOrganization, organizationId);
    };
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}
