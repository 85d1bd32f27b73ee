/** The slice of a list a caller asks for (the API and the CLI turn `page`/`limit` into it). */
export interface PageWindow {
  limit: number;
  offset: number;
}

/** One page of a list and how many rows the whole list has. */
export interface Paged<T> {
  rows: T[];
  total: number;
}
