/**
 * The candidate closest to `name` by edit distance (case ignored), when it is close enough to be
 * a slip of the keyboard (`ensembel` -> `ensemble`, `max_token` -> `max_tokens`); else undefined.
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  const target = name.toLowerCase();
  let best: string | undefined;
  // A quarter of the name, at least 2: a swapped pair is 2 edits.
  let bestDistance = Math.max(2, Math.floor(target.length / 4)) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(target, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
