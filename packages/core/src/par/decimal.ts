/** How many decimal digits a non-negative integer has. */
export function decimalDigits(value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return digits;
}

/** Writes a non-negative integer in decimal ASCII without building a string; returns where it ends. */
export function writeDecimal(out: Buffer, at: number, value: number): number {
  const digits = decimalDigits(value);
  let rest = value;
  for (let position = at + digits - 1; position >= at; position--) {
    out[position] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}
