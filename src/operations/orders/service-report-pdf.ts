// Lays out a service report (service-report-model.ts) as a PDF with pdf-lib: US Letter pages, the PDF's
// standard fonts only (Helvetica, Courier: nothing fetched, nothing embedded), thumbnails as JPEG (the
// caller converts the stored WebP thumbnails). The same model gives the same bytes: the document's dates
// are the order's, not the rendering's, and nothing random is written.
//
// The standard fonts encode Windows-1252 (WinAnsi) only: text is reduced to it first (an accented letter
// kept, a compatible form or its base letter used where one exists, anything else, emoji included,
// printed as "?"). The API's JSON keeps the exact text.

import { PDFDocument, type PDFFont, type PDFImage, type PDFPage, rgb, StandardFonts } from "pdf-lib";
import type { ReportArtifact, ReportCheckPoint, ReportSeal, ServiceReport } from "./service-report-model.js";

/** A thumbnail ready to place: JPEG bytes and its size in pixels. */
export interface ReportImage {
  jpeg: Uint8Array;
  width: number;
  height: number;
}

const PAGE = { width: 612, height: 792 };
const MARGIN = 48;
const CONTENT_WIDTH = PAGE.width - 2 * MARGIN;
const THUMB_BOX = 96;
const GREY = rgb(0.35, 0.35, 0.35);
const RULE = rgb(0.8, 0.8, 0.8);

// --- Text the standard fonts can draw ---------------------------------------------------------------

const COMBINING_MARKS = /\p{M}/u;

/** `text` in the characters `font` can encode: kept, else its compatible form (NFKD, marks dropped:
 * a narrow no-break space becomes a space, "ﬁ" "fi"), else "?". A line break is kept (the layout
 * starts a new line there); other control characters become spaces. */
export function encodable(text: string, charset: ReadonlySet<number>): string {
  let out = "";
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (charset.has(cp) || ch === "\n") {
      out += ch;
      continue;
    }
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
      out += " ";
      continue;
    }
    const compatible = [...ch.normalize("NFKD")].filter((c) => !COMBINING_MARKS.test(c));
    const usable = compatible.length > 0 && compatible.every((c) => charset.has(c.codePointAt(0) as number));
    out += usable ? compatible.join("") : "?";
  }
  return out;
}

interface Fonts {
  regular: PDFFont;
  bold: PDFFont;
  mono: PDFFont;
}

interface Style {
  font: PDFFont;
  size: number;
  color?: ReturnType<typeof rgb>;
}

/** Splits `text` into lines no wider than `width` (at spaces; a longer word is cut). */
function wrap(text: string, style: Style, width: number): string[] {
  const lines: string[] = [];
  const fits = (s: string) => style.font.widthOfTextAtSize(s, style.size) <= width;
  for (const paragraph of text.split("\n")) {
    let line = "";
    for (const word of paragraph.split(" ")) {
      const candidate = line === "" ? word : `${line} ${word}`;
      if (fits(candidate)) {
        line = candidate;
        continue;
      }
      if (line !== "") lines.push(line);
      line = "";
      let rest = word;
      while (!fits(rest)) {
        let cut = rest.length - 1;
        while (cut > 1 && !fits(rest.slice(0, cut))) cut--;
        lines.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      line = rest;
    }
    lines.push(line);
  }
  return lines;
}

/** A cursor down the pages: adds a page when the next block does not fit. */
class Layout {
  private page: PDFPage;
  private y: number;
  private readonly charsets = new Map<PDFFont, Set<number>>();

  constructor(
    private readonly doc: PDFDocument,
    readonly fonts: Fonts,
  ) {
    this.page = doc.addPage([PAGE.width, PAGE.height]);
    this.y = PAGE.height - MARGIN;
  }

  /** Room for `height` more points, on a new page if needed. */
  need(height: number): void {
    if (this.y - height >= MARGIN) return;
    this.page = this.doc.addPage([PAGE.width, PAGE.height]);
    this.y = PAGE.height - MARGIN;
  }

  private safe(text: string, font: PDFFont): string {
    let set = this.charsets.get(font);
    if (!set) {
      set = new Set(font.getCharacterSet());
      this.charsets.set(font, set);
    }
    return encodable(text, set);
  }

  /** Draws `text` wrapped to `width` from `x`; returns the lines' height. */
  text(text: string, style: Style, x = MARGIN, width = CONTENT_WIDTH): number {
    const lineHeight = style.size * 1.3;
    const lines = wrap(this.safe(text, style.font), style, width);
    for (const line of lines) {
      this.need(lineHeight);
      this.y -= lineHeight;
      this.page.drawText(line, {
        x,
        y: this.y + style.size * 0.25,
        size: style.size,
        font: style.font,
        color: style.color ?? rgb(0, 0, 0),
      });
    }
    return lines.length * lineHeight;
  }

  /** "Label: value" on one line (the value wrapped under itself). */
  field(label: string, value: string, x = MARGIN, width = CONTENT_WIDTH, mono = false): void {
    const labelWidth = 72;
    this.need(12);
    const start = this.y;
    this.text(label, { font: this.fonts.bold, size: 9 }, x, labelWidth);
    this.y = start;
    const valueStyle = { font: mono ? this.fonts.mono : this.fonts.regular, size: mono ? 8 : 9 };
    this.text(value, valueStyle, x + labelWidth, width - labelWidth);
  }

  heading(text: string): void {
    this.need(40);
    this.y -= 12;
    this.text(text, { font: this.fonts.bold, size: 13 });
    this.page.drawLine({
      start: { x: MARGIN, y: this.y - 2 },
      end: { x: PAGE.width - MARGIN, y: this.y - 2 },
      thickness: 0.5,
      color: RULE,
    });
    this.y -= 6;
  }

  gap(points: number): void {
    this.y -= points;
  }

  /** Pages so far: a block that grew onto a new page no longer lines up with the old one. */
  get pages(): number {
    return this.doc.getPageCount();
  }

  get cursor(): number {
    return this.y;
  }

  set cursor(y: number) {
    this.y = y;
  }

  image(image: PDFImage, x: number, box: number): number {
    const scale = Math.min(box / image.width, box / image.height, 1);
    const w = image.width * scale;
    const h = image.height * scale;
    this.page.drawImage(image, { x, y: this.y - h, width: w, height: h });
    return h;
  }
}

// --- Values as printed -----------------------------------------------------------------------------

function money(cents: number | null, currency: string): string {
  if (cents === null) return "-";
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toLocaleString("en-US");
  return `${sign}${currency === "USD" ? "$" : `${currency} `}${whole}.${String(abs % 100).padStart(2, "0")}`;
}

/** The time in UTC, and in the job's zone when it is known. */
function when(iso: string | null, zone: string | null): string {
  if (iso === null) return "-";
  const utc = `${iso.slice(0, 16).replace("T", " ")} UTC`;
  if (zone === null) return utc;
  try {
    const local = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "numeric",
      minute: "2-digit",
      timeZoneName: "short",
    }).format(new Date(iso));
    return `${local} (${utc})`;
  } catch {
    // A zone this runtime does not know: UTC alone.
    return utc;
  }
}

function sealLine(seal: ReportSeal | null | undefined): string {
  return seal ? `${seal.seal}  ${seal.verify_url}` : "-";
}

// --- Sections ----------------------------------------------------------------------------------------

function jobSection(out: Layout, r: ServiceReport): void {
  out.heading("The job");
  const loc = r.job.location;
  const place = [loc.name, loc.address, [loc.city, loc.state, loc.zip].filter(Boolean).join(" ")]
    .filter((s) => s !== null && s !== "")
    .join(", ");
  out.field("Order", r.order_id);
  out.field("Trade", `${r.job.trade_name} (${r.job.urgency})`);
  out.field("Location", place);
  out.field("Description", r.job.description);
  if (r.job.reference_id !== null) out.field("Reference", r.job.reference_id);
  if (r.job.account_id !== null) out.field("Account", r.job.account_id);
  out.field("Contractor", r.job.contractor ?? "-");
  out.field("Status", r.status);
}

function timesSection(out: Layout, r: ServiceReport): void {
  out.heading("Times");
  for (const t of r.times) {
    out.field(t.label, when(t.at, r.time_zone));
    if (t.seal) out.field("", `Sealed: ${sealLine(t.seal)}`, MARGIN, CONTENT_WIDTH, true);
  }
}

function checkPoint(out: Layout, label: string, p: ReportCheckPoint, zone: string | null): void {
  const where = p.position
    ? `${p.position.lat.toFixed(5)}, ${p.position.lon.toFixed(5)}${p.position.accuracy_m === null ? "" : ` (+/- ${Math.round(p.position.accuracy_m)} m)`}`
    : "no position given";
  const distance = p.distance_miles === null ? "" : `, ${p.distance_miles.toFixed(2)} mi from the site`;
  out.field(
    label,
    `${when(p.at, zone)}: ${where}${distance}${p.flagged ? " - FLAGGED: far from the site" : ""}`,
  );
  if (p.seal) out.field("", `Sealed: ${sealLine(p.seal)}`, MARGIN, CONTENT_WIDTH, true);
}

function onSiteSection(out: Layout, r: ServiceReport): void {
  if (!r.check_in && !r.check_out) return;
  out.heading("On site");
  if (r.check_in) checkPoint(out, "Check-in", r.check_in, r.time_zone);
  if (r.check_out) checkPoint(out, "Check-out", r.check_out, r.time_zone);
}

function checklistSection(out: Layout, r: ServiceReport): void {
  if (!r.checklist) return;
  out.heading("Checklist");
  for (const item of r.checklist.items) {
    const answer =
      item.answer === null ? "(unanswered)" : `${item.answer}${item.unit ? ` ${item.unit}` : ""}`;
    out.text(`${item.label}: ${answer}`, { font: out.fonts.regular, size: 9 });
  }
}

function costSection(out: Layout, r: ServiceReport): void {
  out.heading("Cost");
  const c = r.cost;
  out.field("Final cost", money(c.final_cost_cents, c.currency));
  if (c.invoice_cents !== null) out.field("Invoiced", money(c.invoice_cents, c.currency));
  out.field("Estimate", money(c.estimated_cents, c.currency));
  if (c.nte_cents !== null) out.field("Not to exceed", money(c.nte_cents, c.currency));
}

function signatureSection(out: Layout, r: ServiceReport): void {
  if (!r.signature) return;
  const s = r.signature;
  out.heading("Signature");
  out.field("Signed by", s.signer_name);
  if (s.signed_at) out.field("Signed", when(s.signed_at, r.time_zone));
  out.field("Attachment", s.attachment_id);
  out.field("SHA-256", s.sha256, MARGIN, CONTENT_WIDTH, true);
  out.field("Seal", s.seal.seal, MARGIN, CONTENT_WIDTH, true);
  out.field("Verify", s.seal.verify_url, MARGIN, CONTENT_WIDTH, true);
}

function artifact(out: Layout, a: ReportArtifact, image: PDFImage | undefined, zone: string | null): void {
  out.need(THUMB_BOX + 12);
  const top = out.cursor;
  const page = out.pages;
  const textX = MARGIN + THUMB_BOX + 12;
  const textWidth = CONTENT_WIDTH - THUMB_BOX - 12;
  let imageHeight = 0;
  if (image) imageHeight = out.image(image, MARGIN, THUMB_BOX);
  const kind = a.kind === "photo" ? "Photo" : a.kind === "signature" ? "Signature" : "Document";
  out.text(`${kind} ${a.attachment_id}`, { font: out.fonts.bold, size: 10 }, textX, textWidth);
  if (a.caption) out.text(a.caption, { font: out.fonts.regular, size: 9 }, textX, textWidth);
  out.text(
    `${a.media_type}, ${a.size.toLocaleString("en-US")} bytes${a.filename ? `, ${a.filename}` : ""}; added by the ${a.uploaded_by} ${when(a.added_at, zone)}`,
    { font: out.fonts.regular, size: 8, color: GREY },
    textX,
    textWidth,
  );
  out.field("SHA-256", a.sha256, textX, textWidth, true);
  out.field("Seal", a.seal.seal, textX, textWidth, true);
  out.field("Verify", a.seal.verify_url, textX, textWidth, true);
  out.cursor = (out.pages === page ? Math.min(out.cursor, top - imageHeight) : out.cursor) - 12;
}

async function artifactsSection(
  out: Layout,
  doc: PDFDocument,
  r: ServiceReport,
  images: ReadonlyMap<string, ReportImage>,
): Promise<void> {
  out.heading(`Photos and documents (${r.artifacts.length})`);
  if (r.artifacts.length === 0) {
    out.text("None were added to this order.", { font: out.fonts.regular, size: 9 });
    return;
  }
  out.text(
    "Each file's SHA-256 is the digest of the bytes its download serves; the seal names the audit record " +
      "that holds the digest: open the verify link to check the record is in the signed log.",
    { font: out.fonts.regular, size: 8, color: GREY },
  );
  out.gap(6);
  for (const a of r.artifacts) {
    const thumb = a.thumbnail_sha256 ? images.get(a.thumbnail_sha256) : undefined;
    artifact(out, a, thumb ? await doc.embedJpg(thumb.jpeg) : undefined, r.time_zone);
  }
}

/** The report as a PDF. `images`: JPEG thumbnails by the thumbnail's SHA-256 (a missing one is left out). */
export async function renderServiceReport(
  r: ServiceReport,
  images: ReadonlyMap<string, ReportImage>,
): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const dated = new Date(r.times.find((t) => t.label === "Completed")?.at ?? r.times[0]?.at ?? 0);
  doc.setTitle(`Service report ${r.order_id}`);
  doc.setSubject(`${r.job.trade_name} work order ${r.order_id}`);
  doc.setKeywords(["service report", r.order_id]);
  doc.setProducer("field-dispatch");
  doc.setCreator("field-dispatch");
  doc.setCreationDate(dated);
  doc.setModificationDate(dated);
  const fonts: Fonts = {
    regular: await doc.embedFont(StandardFonts.Helvetica),
    bold: await doc.embedFont(StandardFonts.HelveticaBold),
    mono: await doc.embedFont(StandardFonts.Courier),
  };
  const out = new Layout(doc, fonts);
  out.text("Service report", { font: fonts.bold, size: 20 });
  out.text(`${r.order_id}${r.livemode ? "" : " (sandbox)"}`, { font: fonts.regular, size: 10, color: GREY });
  jobSection(out, r);
  timesSection(out, r);
  onSiteSection(out, r);
  checklistSection(out, r);
  costSection(out, r);
  signatureSection(out, r);
  await artifactsSection(out, doc, r, images);
  const pages = doc.getPages();
  const ascii = new Set(fonts.regular.getCharacterSet());
  pages.forEach((page, i) => {
    page.drawText(`${encodable(r.order_id, ascii)} - page ${i + 1} of ${pages.length}`, {
      x: MARGIN,
      y: MARGIN / 2,
      size: 7,
      font: fonts.regular,
      color: GREY,
    });
  });
  return doc.save();
}
