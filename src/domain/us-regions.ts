// US states, DC and inhabited territories accepted as `location.state`, with the regional price factor
// the rate model applies and the 2020 census population the sandbox pool is weighted by.
// Regional factor sources (see reference-data/README.md):
//  - bea_rpp_2023: BEA Regional Price Parities, all items, 2023 (factor = RPP / 100), 50 states + DC.
//  - oews_all_occupations_may2023: BLS OEWS May 2023 state mean hourly wage / national mean, all
//    occupations; used where BEA publishes no RPP (PR, GU, VI).
//  - proxy_guam_oews_all_occupations_may2023: neither series covers AS or MP; Guam's OEWS ratio is the
//    nearest published figure for a Pacific territory.
// Population: US Census Bureau, 2020 Census resident population (states, DC, PR) and 2020 Island Areas
// censuses (AS, GU, MP, VI).

type RegionKind = "state" | "district" | "territory";
type FactorSource =
  | "bea_rpp_2023"
  | "oews_all_occupations_may2023"
  | "proxy_guam_oews_all_occupations_may2023";

export interface RegionInfo {
  readonly name: string;
  readonly kind: RegionKind;
  readonly regionalFactor: number;
  readonly factorSource: FactorSource;
  readonly population2020: number;
}

export const REGIONS = {
  AL: {
    name: "Alabama",
    kind: "state",
    regionalFactor: 0.8997,
    factorSource: "bea_rpp_2023",
    population2020: 5024279,
  },
  AK: {
    name: "Alaska",
    kind: "state",
    regionalFactor: 1.0171,
    factorSource: "bea_rpp_2023",
    population2020: 733391,
  },
  AZ: {
    name: "Arizona",
    kind: "state",
    regionalFactor: 1.0111,
    factorSource: "bea_rpp_2023",
    population2020: 7151502,
  },
  AR: {
    name: "Arkansas",
    kind: "state",
    regionalFactor: 0.8651,
    factorSource: "bea_rpp_2023",
    population2020: 3011524,
  },
  CA: {
    name: "California",
    kind: "state",
    regionalFactor: 1.1258,
    factorSource: "bea_rpp_2023",
    population2020: 39538223,
  },
  CO: {
    name: "Colorado",
    kind: "state",
    regionalFactor: 1.0138,
    factorSource: "bea_rpp_2023",
    population2020: 5773714,
  },
  CT: {
    name: "Connecticut",
    kind: "state",
    regionalFactor: 1.0369,
    factorSource: "bea_rpp_2023",
    population2020: 3605944,
  },
  DE: {
    name: "Delaware",
    kind: "state",
    regionalFactor: 0.9925,
    factorSource: "bea_rpp_2023",
    population2020: 989948,
  },
  DC: {
    name: "District of Columbia",
    kind: "district",
    regionalFactor: 1.108,
    factorSource: "bea_rpp_2023",
    population2020: 689545,
  },
  FL: {
    name: "Florida",
    kind: "state",
    regionalFactor: 1.0345,
    factorSource: "bea_rpp_2023",
    population2020: 21538187,
  },
  GA: {
    name: "Georgia",
    kind: "state",
    regionalFactor: 0.967,
    factorSource: "bea_rpp_2023",
    population2020: 10711908,
  },
  HI: {
    name: "Hawaii",
    kind: "state",
    regionalFactor: 1.0861,
    factorSource: "bea_rpp_2023",
    population2020: 1455271,
  },
  ID: {
    name: "Idaho",
    kind: "state",
    regionalFactor: 0.9143,
    factorSource: "bea_rpp_2023",
    population2020: 1839106,
  },
  IL: {
    name: "Illinois",
    kind: "state",
    regionalFactor: 0.9886,
    factorSource: "bea_rpp_2023",
    population2020: 12812508,
  },
  IN: {
    name: "Indiana",
    kind: "state",
    regionalFactor: 0.9218,
    factorSource: "bea_rpp_2023",
    population2020: 6785528,
  },
  IA: {
    name: "Iowa",
    kind: "state",
    regionalFactor: 0.8877,
    factorSource: "bea_rpp_2023",
    population2020: 3190369,
  },
  KS: {
    name: "Kansas",
    kind: "state",
    regionalFactor: 0.8997,
    factorSource: "bea_rpp_2023",
    population2020: 2937880,
  },
  KY: {
    name: "Kentucky",
    kind: "state",
    regionalFactor: 0.9047,
    factorSource: "bea_rpp_2023",
    population2020: 4505836,
  },
  LA: {
    name: "Louisiana",
    kind: "state",
    regionalFactor: 0.8834,
    factorSource: "bea_rpp_2023",
    population2020: 4657757,
  },
  ME: {
    name: "Maine",
    kind: "state",
    regionalFactor: 0.971,
    factorSource: "bea_rpp_2023",
    population2020: 1362359,
  },
  MD: {
    name: "Maryland",
    kind: "state",
    regionalFactor: 1.0396,
    factorSource: "bea_rpp_2023",
    population2020: 6177224,
  },
  MA: {
    name: "Massachusetts",
    kind: "state",
    regionalFactor: 1.0824,
    factorSource: "bea_rpp_2023",
    population2020: 7029917,
  },
  MI: {
    name: "Michigan",
    kind: "state",
    regionalFactor: 0.9418,
    factorSource: "bea_rpp_2023",
    population2020: 10077331,
  },
  MN: {
    name: "Minnesota",
    kind: "state",
    regionalFactor: 0.9842,
    factorSource: "bea_rpp_2023",
    population2020: 5706494,
  },
  MS: {
    name: "Mississippi",
    kind: "state",
    regionalFactor: 0.8729,
    factorSource: "bea_rpp_2023",
    population2020: 2961279,
  },
  MO: {
    name: "Missouri",
    kind: "state",
    regionalFactor: 0.9176,
    factorSource: "bea_rpp_2023",
    population2020: 6154913,
  },
  MT: {
    name: "Montana",
    kind: "state",
    regionalFactor: 0.9024,
    factorSource: "bea_rpp_2023",
    population2020: 1084225,
  },
  NE: {
    name: "Nebraska",
    kind: "state",
    regionalFactor: 0.9038,
    factorSource: "bea_rpp_2023",
    population2020: 1961504,
  },
  NV: {
    name: "Nevada",
    kind: "state",
    regionalFactor: 0.9698,
    factorSource: "bea_rpp_2023",
    population2020: 3104614,
  },
  NH: {
    name: "New Hampshire",
    kind: "state",
    regionalFactor: 1.0534,
    factorSource: "bea_rpp_2023",
    population2020: 1377529,
  },
  NJ: {
    name: "New Jersey",
    kind: "state",
    regionalFactor: 1.0888,
    factorSource: "bea_rpp_2023",
    population2020: 9288994,
  },
  NM: {
    name: "New Mexico",
    kind: "state",
    regionalFactor: 0.9039,
    factorSource: "bea_rpp_2023",
    population2020: 2117522,
  },
  NY: {
    name: "New York",
    kind: "state",
    regionalFactor: 1.0763,
    factorSource: "bea_rpp_2023",
    population2020: 20201249,
  },
  NC: {
    name: "North Carolina",
    kind: "state",
    regionalFactor: 0.9414,
    factorSource: "bea_rpp_2023",
    population2020: 10439388,
  },
  ND: {
    name: "North Dakota",
    kind: "state",
    regionalFactor: 0.8857,
    factorSource: "bea_rpp_2023",
    population2020: 779094,
  },
  OH: {
    name: "Ohio",
    kind: "state",
    regionalFactor: 0.9181,
    factorSource: "bea_rpp_2023",
    population2020: 11799448,
  },
  OK: {
    name: "Oklahoma",
    kind: "state",
    regionalFactor: 0.8829,
    factorSource: "bea_rpp_2023",
    population2020: 3959353,
  },
  OR: {
    name: "Oregon",
    kind: "state",
    regionalFactor: 1.0472,
    factorSource: "bea_rpp_2023",
    population2020: 4237256,
  },
  PA: {
    name: "Pennsylvania",
    kind: "state",
    regionalFactor: 0.975,
    factorSource: "bea_rpp_2023",
    population2020: 13002700,
  },
  RI: {
    name: "Rhode Island",
    kind: "state",
    regionalFactor: 1.0141,
    factorSource: "bea_rpp_2023",
    population2020: 1097379,
  },
  SC: {
    name: "South Carolina",
    kind: "state",
    regionalFactor: 0.9318,
    factorSource: "bea_rpp_2023",
    population2020: 5118425,
  },
  SD: {
    name: "South Dakota",
    kind: "state",
    regionalFactor: 0.881,
    factorSource: "bea_rpp_2023",
    population2020: 886667,
  },
  TN: {
    name: "Tennessee",
    kind: "state",
    regionalFactor: 0.9252,
    factorSource: "bea_rpp_2023",
    population2020: 6910840,
  },
  TX: {
    name: "Texas",
    kind: "state",
    regionalFactor: 0.9718,
    factorSource: "bea_rpp_2023",
    population2020: 29145505,
  },
  UT: {
    name: "Utah",
    kind: "state",
    regionalFactor: 0.95,
    factorSource: "bea_rpp_2023",
    population2020: 3271616,
  },
  VT: {
    name: "Vermont",
    kind: "state",
    regionalFactor: 0.9664,
    factorSource: "bea_rpp_2023",
    population2020: 643077,
  },
  VA: {
    name: "Virginia",
    kind: "state",
    regionalFactor: 1.0075,
    factorSource: "bea_rpp_2023",
    population2020: 8631393,
  },
  WA: {
    name: "Washington",
    kind: "state",
    regionalFactor: 1.0856,
    factorSource: "bea_rpp_2023",
    population2020: 7705281,
  },
  WV: {
    name: "West Virginia",
    kind: "state",
    regionalFactor: 0.8977,
    factorSource: "bea_rpp_2023",
    population2020: 1793716,
  },
  WI: {
    name: "Wisconsin",
    kind: "state",
    regionalFactor: 0.931,
    factorSource: "bea_rpp_2023",
    population2020: 5893718,
  },
  WY: {
    name: "Wyoming",
    kind: "state",
    regionalFactor: 0.9085,
    factorSource: "bea_rpp_2023",
    population2020: 576851,
  },
  PR: {
    name: "Puerto Rico",
    kind: "territory",
    regionalFactor: 0.521,
    factorSource: "oews_all_occupations_may2023",
    population2020: 3285874,
  },
  GU: {
    name: "Guam",
    kind: "territory",
    regionalFactor: 0.6445,
    factorSource: "oews_all_occupations_may2023",
    population2020: 153836,
  },
  VI: {
    name: "Virgin Islands",
    kind: "territory",
    regionalFactor: 0.7732,
    factorSource: "oews_all_occupations_may2023",
    population2020: 87146,
  },
  AS: {
    name: "American Samoa",
    kind: "territory",
    regionalFactor: 0.6445,
    factorSource: "proxy_guam_oews_all_occupations_may2023",
    population2020: 49710,
  },
  MP: {
    name: "Northern Mariana Islands",
    kind: "territory",
    regionalFactor: 0.6445,
    factorSource: "proxy_guam_oews_all_occupations_may2023",
    population2020: 47329,
  },
} as const satisfies Record<string, RegionInfo>;

export type StateCode = keyof typeof REGIONS;

export const STATE_CODES = Object.keys(REGIONS) as StateCode[];

const codeSet: ReadonlySet<string> = new Set(STATE_CODES);

export function isStateCode(value: string): value is StateCode {
  return codeSet.has(value);
}
