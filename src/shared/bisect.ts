/**
 * The first index in [0, length) at which `reached` holds, or `length` when it never does. `reached`
 * must be false and then true along the range (a boundary in something sorted): a binary search.
 */
export function firstIndex(length: number, reached: (index: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (reached(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}
