// Reads back the text a PDF draws, for tests of the service report: every string its pages' content
// streams show with Tj, in order, one a line. The report uses the standard fonts (WinAnsi, one byte a
// character), which pdf-lib draws as hex strings; this reads those, not every PDF there is.

import { inflateSync } from "node:zlib";
import { PDFArray, PDFDocument, PDFName, PDFRawStream, type PDFRef } from "pdf-lib";

export async function pdfText(bytes: Uint8Array): Promise<string> {
  const doc = await PDFDocument.load(bytes);
  const lines: string[] = [];
  for (const page of doc.getPages()) {
    const contents = page.node.get(PDFName.of("Contents"));
    const refs = contents instanceof PDFArray ? contents.asArray() : contents === undefined ? [] : [contents];
    for (const ref of refs) {
      const stream = doc.context.lookup(ref as PDFRef);
      if (!(stream instanceof PDFRawStream)) continue;
      const raw = Buffer.from(stream.contents);
      const flate = stream.dict.get(PDFName.of("Filter")) !== undefined;
      const content = (flate ? inflateSync(raw) : raw).toString("latin1");
      for (const m of content.matchAll(/<([0-9A-Fa-f]*)>\s*Tj/g)) {
        lines.push(Buffer.from(m[1] as string, "hex").toString("latin1"));
      }
    }
  }
  return lines.join("\n");
}

/** The images a PDF holds (XObjects of subtype Image). */
export async function pdfImageCount(bytes: Uint8Array): Promise<number> {
  const doc = await PDFDocument.load(bytes);
  return doc.context
    .enumerateIndirectObjects()
    .filter(([, o]) => o instanceof PDFRawStream && o.dict.get(PDFName.of("Subtype")) === PDFName.of("Image"))
    .length;
}
