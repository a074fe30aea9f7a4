import { COLOR_MARK } from "./output.js";

/** What takes no column: a colour code, or the mark paint() leaves for one. */
const SGR = new RegExp(`\\x1b\\[[0-9;]*m|${COLOR_MARK.source}`, "g");
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const GAP = "  ";

/**
 * A plain, borderless terminal table: readable in a log file and on a TTY alike.
 * One pass for the column widths and one for the lines, so 10,000 rows take
 * milliseconds (cli-table3 laid cells out in time quadratic in the rows: 7 s).
 * A cell is one line: line breaks inside it become spaces. string-width
 * (~0.1 s to import) is loaded only for a table with a cell that is not
 * plain ASCII.
 */
export async function renderTable(head: string[], rows: string[][]): Promise<string> {
  const lines = [head, ...rows].map((row) => row.map((cell) => cell.replace(/\s*[\r\n]+\s*/g, " ")));
  const plain = lines.every((row) => row.every((cell) => PRINTABLE_ASCII.test(cell.replace(SGR, ""))));
  const measure = plain ? (cell: string) => cell.replace(SGR, "").length : displayWidthWith((await import("string-width")).default);
  const widths: number[] = [];
  const measured = lines.map((row) =>
    row.map((cell, column) => {
      const width = measure(cell);
      widths[column] = Math.max(widths[column] ?? 0, width);
      return width;
    }),
  );
  return lines
    .map((row, at) =>
      row
        .map((cell, column) => cell + " ".repeat((widths[column] ?? 0) - (measured[at]?.[column] ?? 0)))
        .join(GAP)
        .trimEnd(),
    )
    .join("\n");
}

/** Columns a terminal gives the text: colour codes take none, wide and combined characters as `stringWidth` says. */
function displayWidthWith(stringWidth: (text: string) => number): (text: string) => number {
  return (text) => {
    const bare = text.replace(SGR, "");
    return PRINTABLE_ASCII.test(bare) ? bare.length : stringWidth(bare);
  };
}
