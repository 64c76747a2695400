/** Each function literal assigned straight to a property inside a function of `source`. */
export function pretenuredClosures(source: string, fileName?: string): { line: number; text: string }[];
