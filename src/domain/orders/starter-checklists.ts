// The sandbox's starter checklists (issue 32): one short service template per trade, created in test mode
// on a store's first start (bootstrap.ts) so the tour's sandbox order ends with a checklist its simulated
// contractor answers. They are ordinary service templates afterwards: the dispatch team lists and retires
// them, an account adds its own beside them or replaces them. Live mode never gets them.
//
// Each has one required item (the check without which the job is not done) and a few optional ones, so a
// contractor app under test meets the completion gate without having to answer a long form.

import type { TradeCode } from "../trades.js";

/** An item as the template-create operation takes it (operations/orders/checklist-templates.ts). */
type StarterItem =
  | { kind: "yes_no"; label: string; required?: boolean }
  | {
      kind: "number";
      label: string;
      required?: boolean;
      unit: string;
      min: number;
      max: number;
    }
  | { kind: "text"; label: string; required?: boolean; max_length?: number }
  | { kind: "photo"; label: string; required?: boolean };

export interface StarterChecklist {
  name: string;
  items: StarterItem[];
}

const notes: StarterItem = { kind: "text", label: "Notes for the customer", max_length: 500 };

/** Every trade's starter checklist (a trade added to trades.ts must be given one here). */
export const STARTER_CHECKLISTS: Readonly<Record<TradeCode, StarterChecklist>> = {
  plumbing: {
    name: "Plumbing call (starter)",
    items: [
      { kind: "yes_no", label: "Leak stopped", required: true },
      { kind: "number", label: "Water pressure after repair", unit: "psi", min: 20, max: 120 },
      { kind: "photo", label: "Before/after photo" },
      notes,
    ],
  },
  electrical: {
    name: "Electrical call (starter)",
    items: [
      { kind: "yes_no", label: "Circuit tested and working", required: true },
      { kind: "number", label: "Voltage at the outlet", unit: "V", min: 100, max: 140 },
      { kind: "photo", label: "Panel or fixture photo" },
      notes,
    ],
  },
  hvac: {
    name: "HVAC call (starter)",
    items: [
      { kind: "yes_no", label: "System running after service", required: true },
      { kind: "number", label: "Supply air temperature", unit: "°F", min: 40, max: 70 },
      { kind: "yes_no", label: "Filter replaced" },
      { kind: "photo", label: "Unit photo" },
    ],
  },
  appliance_repair: {
    name: "Appliance repair (starter)",
    items: [
      { kind: "yes_no", label: "Appliance working after repair", required: true },
      { kind: "text", label: "Parts replaced", max_length: 200 },
      { kind: "photo", label: "Model and serial plate photo" },
    ],
  },
  locksmith: {
    name: "Locksmith call (starter)",
    items: [
      { kind: "yes_no", label: "Lock works with the new keys", required: true },
      { kind: "number", label: "Keys handed over", unit: "keys", min: 1, max: 5 },
      { kind: "photo", label: "Lock photo" },
    ],
  },
  roofing: {
    name: "Roof repair (starter)",
    items: [
      { kind: "yes_no", label: "Leak source repaired", required: true },
      { kind: "number", label: "Area repaired", unit: "sq ft", min: 1, max: 199 },
      { kind: "photo", label: "Repaired area photo" },
      notes,
    ],
  },
  pest_control: {
    name: "Pest treatment (starter)",
    items: [
      { kind: "yes_no", label: "Treatment applied", required: true },
      { kind: "number", label: "Bait stations placed", unit: "stations", min: 0, max: 12 },
      { kind: "text", label: "Products used", max_length: 200 },
      { kind: "photo", label: "Treated area photo" },
    ],
  },
  handyman: {
    name: "General repair (starter)",
    items: [
      { kind: "yes_no", label: "Work done as described", required: true },
      { kind: "photo", label: "Photo of the work" },
      notes,
    ],
  },
};
