interface Decision { kind: string; legal: unknown[]; index: number }
export function act(decision: Decision): unknown {
  const n: number = decision.legal.length;
  return decision.legal[n - 1];
}
