// What a TypeScript client of tldsnap writes against the types openapi-typescript
// generates from /openapi.json (tools/clientcheck copies this file beside the generated
// api.d.ts and runs `tsc --noEmit --strict`). Each function reads the fields a caller
// relies on, each with the type it expects, so that a field renamed, lost or retyped
// in the document fails the compilation. tools/clientcheck also renames one field of
// each main schema in a copy of the document and makes sure this file then fails.
import type { paths } from "./api";

type Json<Op> = Op extends { responses: { 200: { content: { "application/json": infer T } } } } ? T : never;
type Query<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

// ---------------------------------------------------------------- cheapest prices

type CheapestOp = paths["/api/v1/client/prices/cheapest"]["get"];
export const cheapestQuery: Query<CheapestOp> = {
    tlds: ["com", "net"],
    currency: "EUR",
    sort: "total_3_year",
    limit: 5,
    include_stale: false,
    max_age_days: 365,
};

export function cheapest(body: Json<CheapestOp>): string[] {
    const out: string[] = [];
    const tier: string = body.meta.tier;
    const total: number = body.meta.total_tlds;
    const code: string | undefined = body.meta.currency?.code;
    const perUsd: number | undefined = body.meta.currency?.per_usd;
    const rateDate: string | undefined = body.meta.currency?.rate_date;
    const unknown: string[] = body.meta.not_found?.tlds ?? [];
    for (const [tld, r] of Object.entries(body.results)) {
        const sellers: number = r.registrar_count;
        const stale: number = r.stale_count ?? 0;
        for (const e of r.cheapest_register) {
            const rank: number = e.rank;
            const key: string = e.registrar_key;
            const name: string = e.registrar_name;
            const register: number = e.register_price;
            const renew: number = e.renew_price;
            const five: number = e.total_cost_5_year;
            const updated: string | undefined = e.last_updated;
            const isStale: true | undefined = e.stale;
            const promotion: true | undefined = e.promotion;
            const regular: number | null | undefined = e.regular_register_price;
            const fee: number | undefined = e.icann_fee;
            const feeIncluded: boolean | undefined = e.icann_fee_included;
            out.push(`${tld} #${rank} ${key} ${name} ${register}/${renew}/${five} ${updated} ${isStale} ${promotion} ${regular} ${fee} ${feeIncluded} of ${sellers} (${stale} stale)`);
        }
    }
    out.push(`${tier} ${total} ${code} ${perUsd} ${rateDate} ${unknown.join(",")}`);
    return out;
}

type PublicCheapestOp = paths["/api/v1/prices/cheapest"]["get"];
export function publicCheapest(body: Json<PublicCheapestOp>): string[] {
    const out: string[] = [];
    for (const [tld, r] of Object.entries(body.results)) {
        const avg: number | null | undefined = r.avg_prices.register;
        for (const e of r.cheapest_register) {
            const transfer: number | null | undefined = e.transfer_price;
            const one: number = e.total_cost_1_year;
            const three: number = e.total_cost_3_year;
            out.push(`${tld} ${e.rank} ${e.registrar_name} ${transfer} ${one} ${three} ${avg}`);
        }
    }
    return out;
}

// ---------------------------------------------------------------- prices

type PricesOp = paths["/api/v1/client/prices"]["get"];
export const pricesQuery: Query<PricesOp> = { tlds: ["com", "io"], registrars: ["porkbun"], at: "2026-01-01", currency: "GBP" };

export function prices(body: Json<PricesOp>): string[] {
    const out: string[] = [];
    const elapsed: string = body.stats.time_elapsed;
    const updated: string = body.stats.last_updated;
    const tlds: number = body.stats.total_tlds;
    const code: string | undefined = body.stats.currency?.code;
    for (const [tld, byRegistrar] of Object.entries(body.results)) {
        for (const [registrar, p] of Object.entries(byRegistrar)) {
            const register: number | null = p.register_price;
            const renew: number | null = p.renew_price;
            const transfer: number | null = p.transfer_price;
            const last: string = p.last_updated;
            const stale: true | undefined = p.stale;
            out.push(`${tld} ${registrar} ${register} ${renew} ${transfer} ${last} ${stale}`);
        }
    }
    out.push(`${elapsed} ${updated} ${tlds} ${code}`);
    return out;
}

// ---------------------------------------------------------------- registrars of a TLD

type RegistrarsOp = paths["/api/v1/client/registrars/tld/{tld}"]["get"];
export const registrarsPath: RegistrarsOp["parameters"]["path"] = { tld: "com" };
export const registrarsQuery: Query<RegistrarsOp> = { include_prices: true, currency: "EUR" };

export function registrars(body: Json<RegistrarsOp>): string[] {
    const out: string[] = [`${body.tld} ${body.registrar_count} ${body.stale_count ?? 0} ${body.message ?? ""}`];
    for (const r of body.registrars) {
        const key: string = r.key;
        const name: string = r.name;
        const url: string = r.website_url;
        const register: number | undefined = r.prices?.register;
        const renew: number | undefined = r.prices?.renew;
        const transfer: number | null | undefined = r.prices?.transfer;
        const quoted: string | undefined = r.original_prices?.currency;
        const quotedRenew: number | null | undefined = r.original_prices?.renew;
        out.push(`${key} ${name} ${url} ${register} ${renew} ${transfer} ${quoted} ${quotedRenew}`);
    }
    return out;
}

// ---------------------------------------------------------------- overview

type OverviewOp = paths["/api/v1/client/overview/tld/{tld}"]["get"];
type Pick = Json<OverviewOp>["cheapest_register"];

function pick(p: Pick): string {
    if (p === null) {
        return "nobody";
    }
    const price: number = p.price;
    const key: string = p.registrar_key;
    const name: string = p.registrar_name;
    const quoted: number | null | undefined = p.original_price?.price;
    return `${key} ${name} ${price} ${quoted}`;
}

export function overview(body: Json<OverviewOp>): string {
    const tld: string = body.tld;
    const unicode: string = body.unicode;
    const type: string | null = body.type;
    const manager: string | null = body.manager;
    const free: boolean = body.free;
    const sellers: number = body.registrar_count;
    const avg: number | null | undefined = body.avg_prices.renew;
    const code: string | undefined = body.currency?.code;
    return `${tld} ${unicode} ${type} ${manager} ${free} ${sellers} ${avg} ${code} ` +
        [body.cheapest_register, body.lowest_renew, body.lowest_5_year].map(pick).join("; ");
}

// ---------------------------------------------------------------- history

type HistoryOp = paths["/api/v1/client/history/tld/{tld}"]["get"];
export const historyQuery: Query<HistoryOp> = { from: "2025-01-01", to: "2026-01-01", registrars: ["porkbun", "dynadot"] };

export function history(body: Json<HistoryOp>): string[] {
    const out: string[] = [`${body.tld} ${body.from} ${body.to}`];
    for (const [registrar, h] of Object.entries(body.history)) {
        const first: string | undefined = h.coverage?.first;
        const last: string | undefined = h.coverage?.last;
        const atFrom: number | null | undefined = h.price_at_from?.register_price;
        for (const c of h.changes) {
            const date: string = c.date;
            const register: number | null = c.register_price;
            const renew: number | null = c.renew_price;
            const transfer: number | null = c.transfer_price;
            out.push(`${registrar} ${date} ${register} ${renew} ${transfer}`);
        }
        out.push(`${registrar} ${first}..${last} ${atFrom}`);
    }
    return out;
}

// ---------------------------------------------------------------- export

type ExportOp = paths["/api/v1/client/export"]["get"];
export const exportQuery: Query<ExportOp> = { tlds: ["com"], currency: "USD" };

export function exportRows(body: ExportOp["responses"][200]["content"]["text/csv"], etag: ExportOp["responses"][200]["headers"]["ETag"]): string[][] {
    const rows: string[][] = body.split("\n").map((line: string) => line.split(","));
    rows.push([etag ?? ""]);
    return rows;
}

// ---------------------------------------------------------------- catalogue

type CatalogueOp = paths["/api/v1/client/tlds"]["get"];
export const catalogueQuery: Query<CatalogueOp> = { q: "co", type: "country-code", sort: "cheapest", limit: 50 };

export function catalogue(body: Json<CatalogueOp>): string[] {
    const out: string[] = [];
    const next: string | null = body.meta.next_cursor;
    const total: number = body.meta.total;
    const limit: number = body.meta.limit;
    for (const t of body.tlds) {
        const sellers: number = t.registrar_count;
        const avg: number | null = t.avg_register_price;
        out.push(`${t.tld} ${t.unicode} ${t.type} ${t.free} ${sellers} ${avg} ${pick(t.cheapest_register)}`);
    }
    out.push(`${total} ${limit} ${next ?? "last page"}`);
    return out;
}

// ---------------------------------------------------------------- a refusal

type Problem = CheapestOp["responses"][400]["content"]["application/problem+json"];
export function problem(body: Problem): string {
    const code: Problem["code"] = body.code;
    const known: "invalid_parameter" | "missing_parameter" | "too_many_values" | "other" =
        code === "invalid_parameter" || code === "missing_parameter" || code === "too_many_values" ? code : "other";
    return `${body.status} ${body.title} ${body.detail} ${body.type} ${known} ${body.parameter ?? ""}`;
}
