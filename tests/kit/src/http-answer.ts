/** A fetch answer's status, headers and body: parsed JSON, or the text where it is not JSON. */
export async function readAnswer(response: Response): Promise<{ status: number; headers: Headers; body: any }> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
}
