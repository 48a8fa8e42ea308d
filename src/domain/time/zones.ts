// The local time zone (IANA name) of a job, from its state, and from its ZIP where the state spans zones.
// Pure: the tables below are the whole data, Node's built-in ICU (Intl) knows the zones' offsets and DST.
//
// Data source, compiled by hand: the zone boundaries of 49 CFR Part 71 (Standard Time Zone Boundaries,
// county by county) and the zone comments of the IANA tz database's `northamerica` file (which zone
// each county follows, e.g. America/Menominee for Michigan's four Wisconsin-border counties), mapped to
// USPS ZIP prefixes: a state's main zone (the zone most of its people live in); the three-digit ZIP
// prefixes (ZIP3) of that state whose area lies in another zone; and single ZIPs (ZIP5) of towns on the
// other side of a line that cuts through a ZIP3 area. A ZIP on a county line may still be an hour off
// (ZIP areas follow post offices, not counties), and zones no federal table records (the Navajo Nation
// keeps DST inside Arizona, unofficial Mountain time in Culberson County, TX) are not modelled: a caller
// who needs the exact local time sends a service window with its offset.

import type { StateCode } from "../us-regions.js";

const NEW_YORK = "America/New_York";
const CHICAGO = "America/Chicago";
const DENVER = "America/Denver";
const LOS_ANGELES = "America/Los_Angeles";
const BOISE = "America/Boise";
const MENOMINEE = "America/Menominee";

/** Each state's main zone (every state, DC and territory the service knows). */
export const STATE_TIME_ZONES: Readonly<Record<StateCode, string>> = {
  AL: CHICAGO,
  AK: "America/Anchorage",
  AZ: "America/Phoenix", // no DST
  AR: CHICAGO,
  CA: LOS_ANGELES,
  CO: DENVER,
  CT: NEW_YORK,
  DE: NEW_YORK,
  DC: NEW_YORK,
  FL: NEW_YORK,
  GA: NEW_YORK,
  HI: "Pacific/Honolulu", // no DST
  ID: BOISE,
  IL: CHICAGO,
  IN: "America/Indiana/Indianapolis",
  IA: CHICAGO,
  KS: CHICAGO,
  KY: NEW_YORK,
  LA: CHICAGO,
  ME: NEW_YORK,
  MD: NEW_YORK,
  MA: NEW_YORK,
  MI: "America/Detroit",
  MN: CHICAGO,
  MS: CHICAGO,
  MO: CHICAGO,
  MT: DENVER,
  NE: CHICAGO,
  NV: LOS_ANGELES,
  NH: NEW_YORK,
  NJ: NEW_YORK,
  NM: DENVER,
  NY: NEW_YORK,
  NC: NEW_YORK,
  ND: CHICAGO,
  OH: NEW_YORK,
  OK: CHICAGO,
  OR: LOS_ANGELES,
  PA: NEW_YORK,
  RI: NEW_YORK,
  SC: NEW_YORK,
  SD: CHICAGO,
  TN: CHICAGO,
  TX: CHICAGO,
  UT: DENVER,
  VT: NEW_YORK,
  VA: NEW_YORK,
  WA: LOS_ANGELES,
  WV: NEW_YORK,
  WI: CHICAGO,
  WY: DENVER,
  PR: "America/Puerto_Rico", // no DST
  GU: "Pacific/Guam",
  VI: "America/St_Thomas",
  AS: "Pacific/Pago_Pago",
  MP: "Pacific/Saipan",
};

/** ZIP3 areas of a state in another zone than the state's main one. */
export const ZIP3_TIME_ZONES: Readonly<Partial<Record<StateCode, Readonly<Record<string, string>>>>> = {
  // El Paso and Hudspeth counties (the rest of the 798 area, Big Bend, is Central: see ZIP5 below).
  TX: { "799": DENVER, "885": DENVER },
  // The panhandle west of the Apalachicola River: Panama City and Pensacola.
  FL: { "324": CHICAGO, "325": CHICAGO },
  // East Tennessee: Chattanooga, Knoxville, the Tri-Cities.
  TN: {
    "373": NEW_YORK,
    "374": NEW_YORK,
    "376": NEW_YORK,
    "377": NEW_YORK,
    "378": NEW_YORK,
    "379": NEW_YORK,
  },
  // Western Kentucky: Paducah, Bowling Green, Owensboro, Henderson.
  KY: { "420": CHICAGO, "421": CHICAGO, "422": CHICAGO, "423": CHICAGO, "424": CHICAGO },
  // Northwest Indiana (Chicago's suburbs) and the southwest (Evansville).
  IN: { "463": CHICAGO, "464": CHICAGO, "476": CHICAGO, "477": CHICAGO },
  // Southwest North Dakota (Dickinson).
  ND: { "586": DENVER },
  // West River South Dakota (Rapid City).
  SD: { "577": DENVER },
  // The Nebraska panhandle (Scottsbluff, Alliance).
  NE: { "693": DENVER },
  // Malheur County, Oregon.
  OR: { "979": BOISE },
  // Idaho north of the Salmon River (Lewiston, Coeur d'Alene).
  ID: { "835": LOS_ANGELES, "838": LOS_ANGELES },
};

/** Single ZIPs across a line that cuts a ZIP3 area: they win over the ZIP3 and state tables. */
export const ZIP5_TIME_ZONES: Readonly<Partial<Record<StateCode, Readonly<Record<string, string>>>>> = {
  // El Paso and Hudspeth counties' towns in the 798 area.
  TX: Object.fromEntries(
    ["79821", "79835", "79836", "79837", "79838", "79839", "79847", "79849", "79851", "79853"].map((z) => [
      z,
      DENVER,
    ]),
  ),
  // Gulf County's Port St. Joe keeps Eastern time in the 324 area.
  FL: { "32456": NEW_YORK, "32457": NEW_YORK },
  // Central-time counties of the 373 area (Franklin, Coffee, Grundy, Marion, Sequatchie, Bledsoe).
  TN: Object.fromEntries(
    [
      "37301",
      "37305",
      "37313",
      "37318",
      "37324",
      "37327",
      "37330",
      "37339",
      "37340",
      "37342",
      "37347",
      "37356",
      "37365",
      "37366",
      "37367",
      "37374",
      "37375",
      "37380",
      "37383",
      "37387",
      "37388",
      "37389",
      "37397",
      "37398",
    ].map((z) => [z, CHICAGO]),
  ),
  // Central-time towns of Kentucky's eastern ZIP3 areas (Clinton, Russell, Cumberland, Adair, Green, Hart,
  // Grayson, Breckinridge counties).
  KY: Object.fromEntries(
    ["42602", "42629", "42642", "42717", "42728", "42743", "42754", "42765", "40143"].map((z) => [
      z,
      CHICAGO,
    ]),
  ),
  // Perry County (Tell City) and Starke County (Knox) follow Central time.
  IN: { "47586": "America/Indiana/Tell_City", "46534": "America/Indiana/Knox" },
  // Michigan's Upper Peninsula counties on the Wisconsin line: Gogebic, Iron, Dickinson, Menominee.
  MI: Object.fromEntries(
    [
      "49801",
      "49802",
      "49831",
      "49870",
      "49873",
      "49874",
      "49876",
      "49887",
      "49892",
      "49893",
      "49896",
      "49858",
      "49915",
      "49920",
      "49935",
      "49964",
      "49911",
      "49938",
      "49959",
      "49968",
      "49969",
    ].map((z) => [z, MENOMINEE]),
  ),
  // Mountain-time towns outside the 577 area: Haakon, Jackson, Perkins, Dewey and Ziebach counties.
  SD: Object.fromEntries(["57567", "57543", "57638", "57623", "57625"].map((z) => [z, DENVER])),
  // Mountain-time towns of the 691 area: Keith, Perkins, Arthur, Deuel, Cheyenne, Kimball counties.
  NE: Object.fromEntries(
    [
      "69121",
      "69122",
      "69127",
      "69129",
      "69140",
      "69141",
      "69144",
      "69145",
      "69146",
      "69147",
      "69148",
      "69149",
      "69153",
      "69154",
      "69155",
      "69160",
      "69162",
      "69168",
    ].map((z) => [z, DENVER]),
  ),
  // Sherman, Wallace, Greeley and Hamilton counties.
  KS: Object.fromEntries(
    ["67733", "67735", "67741", "67758", "67761", "67762", "67836", "67857", "67878", "67879"].map((z) => [
      z,
      DENVER,
    ]),
  ),
  // Drewsey (Harney County) in the 979 area keeps Pacific time.
  OR: { "97904": LOS_ANGELES },
  // West Wendover follows Mountain time.
  NV: { "89883": DENVER },
  // Adak and Atka, west of 169.5 degrees W.
  AK: { "99546": "America/Adak", "99547": "America/Adak" },
};

/**
 * The IANA zone of a job in `state`, refined by its ZIP (12345 or 12345-6789) when one is given: its ZIP5
 * entry, else its ZIP3 entry, else the state's main zone. A ZIP of another state's tables is ignored.
 */
export function timeZoneOf(state: StateCode, zip?: string | null): string {
  if (zip) {
    const five = zip.slice(0, 5);
    const exact = ZIP5_TIME_ZONES[state]?.[five];
    if (exact) return exact;
    const area = ZIP3_TIME_ZONES[state]?.[five.slice(0, 3)];
    if (area) return area;
  }
  return STATE_TIME_ZONES[state];
}

/** Every zone the tables name (for a test that ICU knows them all). */
export function allTimeZones(): string[] {
  const zones = new Set<string>(Object.values(STATE_TIME_ZONES));
  for (const table of [ZIP3_TIME_ZONES, ZIP5_TIME_ZONES]) {
    for (const byZip of Object.values(table)) for (const zone of Object.values(byZip ?? {})) zones.add(zone);
  }
  return [...zones].sort();
}
