// The 8 trade verticals: the occupation behind each, its public wage figures and its typical job length.
// Wage figures: BLS OEWS May 2024, national cross-industry estimates (reference-data/trades_detail.csv).
// They inform the model rates in pricing.ts; they are not our rates.

export const TRADE_CODES = [
  "plumbing",
  "electrical",
  "hvac",
  "appliance_repair",
  "locksmith",
  "roofing",
  "pest_control",
  "handyman",
] as const;

export type TradeCode = (typeof TRADE_CODES)[number];

export interface TradeInfo {
  readonly code: TradeCode;
  readonly name: string;
  readonly socCode: string;
  readonly occupation: string;
  /** OEWS May 2024 national hourly wage percentiles, USD. */
  readonly wage: { readonly p25: number; readonly median: number; readonly p75: number };
  /** Typical on-site hours of a service call in this trade (our model assumption). */
  readonly typicalJobHours: number;
  /** Share of sandbox contractors in this trade able to take emergencies (sandbox generator only). */
  readonly emergencyShare: number;
}

export const TRADES: Readonly<Record<TradeCode, TradeInfo>> = {
  plumbing: {
    code: "plumbing",
    name: "Plumbing",
    socCode: "47-2152",
    occupation: "Plumbers, Pipefitters, and Steamfitters",
    wage: { p25: 23.49, median: 30.27, p75: 39.37 },
    typicalJobHours: 2,
    emergencyShare: 0.5,
  },
  electrical: {
    code: "electrical",
    name: "Electrical",
    socCode: "47-2111",
    occupation: "Electricians",
    wage: { p25: 23.47, median: 29.98, p75: 39.29 },
    typicalJobHours: 2.5,
    emergencyShare: 0.45,
  },
  hvac: {
    code: "hvac",
    name: "HVAC",
    socCode: "49-9021",
    occupation: "Heating, Air Conditioning, and Refrigeration Mechanics and Installers",
    wage: { p25: 23.0, median: 28.75, p75: 35.97 },
    typicalJobHours: 2.5,
    emergencyShare: 0.45,
  },
  appliance_repair: {
    code: "appliance_repair",
    name: "Appliance repair",
    socCode: "49-9031",
    occupation: "Home Appliance Repairers",
    wage: { p25: 19.37, median: 23.76, p75: 29.69 },
    typicalJobHours: 1.5,
    emergencyShare: 0.15,
  },
  locksmith: {
    code: "locksmith",
    name: "Locksmith",
    socCode: "49-9094",
    occupation: "Locksmiths and Safe Repairers",
    wage: { p25: 19.54, median: 24.27, p75: 30.93 },
    typicalJobHours: 1,
    emergencyShare: 0.6,
  },
  roofing: {
    code: "roofing",
    name: "Roofing",
    socCode: "47-2181",
    occupation: "Roofers",
    wage: { p25: 21.78, median: 24.51, p75: 30.78 },
    typicalJobHours: 4,
    emergencyShare: 0.3,
  },
  pest_control: {
    code: "pest_control",
    name: "Pest control",
    socCode: "37-2021",
    occupation: "Pest Control Workers",
    wage: { p25: 17.82, median: 21.51, p75: 23.7 },
    typicalJobHours: 1.5,
    emergencyShare: 0.2,
  },
  handyman: {
    code: "handyman",
    name: "Handyman / general maintenance",
    socCode: "49-9071",
    occupation: "Maintenance and Repair Workers, General",
    wage: { p25: 18.77, median: 23.38, p75: 29.67 },
    typicalJobHours: 2.5,
    emergencyShare: 0.2,
  },
};
