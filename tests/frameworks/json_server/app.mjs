// json-server 0.17 (npm, pinned in package.json and its lock) as a real upstream of the
// frameworks tests, used as a module the way its README's "Module" section shows:
// `create()`, `defaults()`, `router(data)`, with our middleware in front.
//
// Same command line and lifetime as ../common.py: `node app.mjs --port PORT --db FILE
// --sets '{"zero": 0, ...}'`; the rows are common.py's `row()` (non-ASCII, quotes,
// nulls), ids unique across sets in set order; it exits when its standard input closes.
// json-server keeps its data in memory (lowdb), so `--db` is where the seeded rows are
// written as JSON, and `/_truth/{set}` reads that file — never through json-server's
// router. `/_requests` answers every request's path and query string, by path.
//
// One json-server resource per set (`zero`, `one`, ...), with the router mounted twice:
// - `GET /sets/{set}?_page=&_limit=`: page numbers from 1, 10 rows unless `_limit`,
//   `X-Total-Count`, and a `Link` header with first/prev/next/last in its own `_page`
//   and `_limit` names (no `Link` once a page is empty or holds the whole set).
// - `GET /slices/{set}?_start=&_limit=`: `Array.slice` from `_start`, `X-Total-Count`.
// Without `_page`, `_end` or `_limit` json-server answers the whole resource.
//
// json-server has no OpenAPI generator. The document at /openapi.json is ours, written by
// hand as many are: both operations and their parameters as plain integers with no
// minimum, default or description, a bare array as the 200 body, and no response headers
// declared. The behaviour behind it is json-server's own.

import { writeFileSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import jsonServer from "json-server";

const { values: args } = parseArgs({
  options: {
    port: { type: "string" },
    db: { type: "string" },
    sets: { type: "string" },
  },
});
for (const name of ["port", "db", "sets"]) {
  if (!args[name]) {
    console.error(`app.mjs: --${name} is required`);
    process.exit(2);
  }
}

// common.py's `row(i, dataset, n)`, field for field
function row(i, dataset, n) {
  return {
    id: i,
    name: `${dataset} row ${n} \u2013 caf\u00e9 "q" \u2713`,
    score: ((n * 37) % 101) - 50,
    note: n % 3 === 0 ? null : `note ${i}`,
  };
}

const sets = JSON.parse(args.sets);
const data = {};
let i = 0;
for (const [dataset, count] of Object.entries(sets)) {
  data[dataset] = [];
  for (let n = 0; n < Number(count); n++) {
    i += 1;
    data[dataset].push(row(i, dataset, n));
  }
}
writeFileSync(args.db, JSON.stringify(data));

const requests = {};

const doc = {
  openapi: "3.0.3",
  info: { title: "json-server items", version: "0.17.4" },
  paths: {
    "/sets/{dataset}": {
      get: {
        operationId: "listSetPages",
        summary: "Items of a set, by page",
        parameters: [
          { name: "dataset", in: "path", required: true, schema: { type: "string" } },
          { name: "_page", in: "query", schema: { type: "integer" } },
          { name: "_limit", in: "query", schema: { type: "integer" } },
        ],
        responses: {
          200: {
            description: "The page's items",
            content: {
              "application/json": {
                schema: { type: "array", items: { $ref: "#/components/schemas/Item" } },
              },
            },
          },
        },
      },
    },
    "/slices/{dataset}": {
      get: {
        operationId: "listSetSlices",
        summary: "Items of a set, by slice",
        parameters: [
          { name: "dataset", in: "path", required: true, schema: { type: "string" } },
          { name: "_start", in: "query", schema: { type: "integer" } },
          { name: "_limit", in: "query", schema: { type: "integer" } },
        ],
        responses: {
          200: {
            description: "The slice's items",
            content: {
              "application/json": {
                schema: { type: "array", items: { $ref: "#/components/schemas/Item" } },
              },
            },
          },
        },
      },
    },
  },
  components: {
    schemas: {
      Item: {
        type: "object",
        required: ["id", "name", "score"],
        properties: {
          id: { type: "integer" },
          name: { type: "string" },
          score: { type: "integer" },
          note: { type: "string", nullable: true },
        },
      },
    },
  },
};

const server = jsonServer.create();

server.use((req, res, next) => {
  if (req.path === "/_requests") {
    res.json(requests);
    return;
  }
  const q = req.originalUrl.indexOf("?");
  (requests[req.path] ??= []).push(q < 0 ? "" : req.originalUrl.slice(q + 1));
  next();
});
server.get("/openapi.json", (req, res) => res.json(doc));
server.get("/_truth/:dataset", (req, res) => {
  const seeded = JSON.parse(readFileSync(args.db, "utf8"));
  res.json(seeded[req.params.dataset] ?? []);
});
server.use(jsonServer.defaults({ logger: false, readOnly: true, noCors: true }));
const router = jsonServer.router(structuredClone(data));
server.use("/sets", router);
server.use("/slices", router);

server.listen(Number(args.port), "127.0.0.1");

process.stdin.on("data", () => {});
process.stdin.on("end", () => process.exit(0));
process.stdin.on("close", () => process.exit(0));
process.stdin.resume();
