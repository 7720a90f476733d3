/** Types for the plain BM25 library the LoCoMo section runs beside live-mem (bench-locomo.ts); the packages ship none. */
declare module 'wink-bm25-text-search' {
  interface Bm25Engine {
    defineConfig(config: { fldWeights: Record<string, number>; bm25Params?: { k1?: number; b?: number; k?: number } }): boolean;
    definePrepTasks(tasks: Array<(input: never) => unknown>, field?: string): number;
    addDoc(doc: Record<string, string>, id: string): number;
    consolidate(fp?: number): boolean;
    search(text: string, limit?: number): Array<[string, number]>;
  }
  const createEngine: () => Bm25Engine;
  export default createEngine;
}

declare module 'wink-nlp-utils' {
  const nlp: {
    string: { lowerCase(text: string): string; removeExtraSpaces(text: string): string; tokenize0(text: string): string[] };
    tokens: { removeWords(tokens: string[]): string[]; stem(tokens: string[]): string[]; propagateNegations(tokens: string[]): string[] };
  };
  export default nlp;
}
