// The run's secrets (every credential the kubeconfig holds) and the one way to hide them in text
// that job-sweeper prints or writes: errors, and failed Jobs' log tails in the summary.

/** Registered secrets, and text with each of them replaced by ***. */
export class SecretMasker {
  private secrets: string[] = []

  /** Registers a secret; blank values are ignored. Returns whether it is new. */
  add(secret: string): boolean {
    const value = secret.trim()
    if (value === '' || this.secrets.includes(value)) return false
    // Longest first, so that a secret that contains another is hidden whole.
    this.secrets = [...this.secrets, value].sort((a, b) => b.length - a.length)
    return true
  }

  /** `text` with every occurrence of every registered secret replaced by ***. */
  redact(text: string): string {
    let out = text
    for (const secret of this.secrets) out = out.split(secret).join('***')
    return out
  }
}

/** The masker of this process's secrets: one process is one run (the action's step, or one CLI command). */
export const secretMasker = new SecretMasker()

/** `text` with every secret this run has found replaced by ***. */
export function redact(text: string): string {
  return secretMasker.redact(text)
}
