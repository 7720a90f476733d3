/**
 * Long work on the event loop in slices: `await pause()` between steps hands the loop to whatever
 * waits (another client's request, a lease renewal) once `sliceMs` have passed since the last turn,
 * and costs nothing otherwise. A plan of thousands of edits or a large import then delays other
 * clients by a slice, not by the whole work (issue 39).
 */
export function slicer(sliceMs = 8): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
