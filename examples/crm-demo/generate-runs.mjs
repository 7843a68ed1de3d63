#!/usr/bin/env node
// Recreates examples/crm-demo/.silo/runs/ from scratch, byte for byte the way Silo
// writes its run directories (see SILO_FORMAT.md):
//   - JSON files: JSON.stringify(value, null, 2) + "\n", UTF-8 without BOM, LF;
//   - trace.jsonl: one JSON.stringify(event) per line, each ending in "\n";
//   - directory names: run_<UTC start YYYYMMDDHHMMSS>_<pid in base 36>.
// Deterministic: no wall clock, no randomness. Node 20, no npm packages.
//
//   node examples/crm-demo/generate-runs.mjs

import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const RUNS_DIR = join(HERE, ".silo", "runs");
const TODAY = "2026-03-16"; // the simulated clock (state.now) of both environments

// --- Silo's writers ----------------------------------------------------------------

function writeJson(path, value) {
  writeFileSync(path, JSON.stringify(value, null, 2) + "\n", "utf8");
}

function writeJsonl(path, events) {
  writeFileSync(path, events.map((e) => JSON.stringify(e) + "\n").join(""), "utf8");
}

function runId(startedAt, pid) {
  const d = new Date(startedAt);
  const p2 = (n) => String(n).padStart(2, "0");
  const stamp =
    String(d.getUTCFullYear()) +
    p2(d.getUTCMonth() + 1) +
    p2(d.getUTCDate()) +
    p2(d.getUTCHours()) +
    p2(d.getUTCMinutes()) +
    p2(d.getUTCSeconds());
  return `run_${stamp}_${pid.toString(36)}`;
}

const iso = (ms) => new Date(ms).toISOString();

// trace.jsonl as SILO_FORMAT.md describes both versions. Every event has "seq" (from 1)
// and "at". Older Silo (default): only tool_call {seq,type,at,tool,input} and
// tool_result {seq,type,at,tool,output,isError}, `input` left out when the agent passed
// nothing. Newer Silo (`newTrace`): run_start first, calls and results paired by
// callId (from 1), results with durationMs, then agent_output, run_end and
// verifier_result. A failed call's output is {code, message[, details]}. A crashed
// rollout's trace stops where the process died.
function trace(startMs, durationMs, calls, { task, result = null, newTrace = false, crash = null, end = null } = {}) {
  const events = [];
  const push = (at, event) => events.push({ seq: events.length + 1, ...event, at: iso(at) });
  const reorder = (e) => {
    // Silo's own key order: seq, type, at, then the event's fields.
    const { seq, type, at, ...rest } = e;
    return { seq, type, at, ...rest };
  };
  if (newTrace) {
    const tools = [...new Set(calls.map((c) => c.tool))];
    push(startMs, { type: "run_start", task, config: { maxToolCalls: 20, timeoutMs: 60000 }, tools });
  }
  const step = Math.floor((durationMs - 800) / Math.max(calls.length, 1));
  calls.forEach((c, i) => {
    const t = startMs + 400 + i * step;
    const took = Math.floor(step / 3);
    const call = { type: "tool_call" };
    if (newTrace) call.callId = i + 1;
    call.tool = c.tool;
    if (c.args !== undefined) call.input = c.args;
    push(t, call);
    const res = { type: "tool_result" };
    if (newTrace) res.callId = i + 1;
    res.tool = c.tool;
    res.output = c.error ? { code: c.code ?? "tool_error", message: c.error, ...(c.details ? { details: c.details } : {}) } : (c.output ?? { ok: true });
    res.isError = Boolean(c.error);
    if (newTrace) res.durationMs = took;
    push(t + took, res);
  });
  if (newTrace && !crash && result) {
    const at = startMs + durationMs - 200;
    push(at, { type: "agent_output", output: result.agentOutput });
    push(at + 1, { type: "run_end", terminationReason: end, error: result.error });
    push(at + 150, { type: "verifier_result", passed: result.passed, reward: result.reward });
  }
  return events.map(reorder);
}

// --- the world ----------------------------------------------------------------------

const check = (label, passed, detail, required) => ({ label, passed, detail, required });

function result({ checks, toolCalls, toolErrors = 0, terminationReason = "completed", agentOutput, error = null, reward }) {
  const required = checks.filter((c) => c.required);
  const failedRequired = required.filter((c) => !c.passed).map((c) => c.label);
  const checksPassed = checks.filter((c) => c.passed).length;
  return {
    passed: failedRequired.length === 0,
    // Silo's default verifier rounds to 2 decimals; a hand-written one may not.
    reward: reward ?? Math.round((checksPassed / checks.length) * 100) / 100,
    requiredPassed: required.length - failedRequired.length,
    requiredTotal: required.length,
    failedRequired,
    checksPassed,
    checksFailed: checks.length - checksPassed,
    toolCalls,
    toolErrors,
    terminationReason,
    agentOutput,
    error,
    checks,
  };
}

const coll = (added = [], removed = [], changed = []) => ({ added, removed, changed });

// One entry per run directory. `files` says which files the rollout left behind.
const RUNS = [];
function run(spec) {
  RUNS.push(spec);
}

// ---- crm-west / TASK-001: qualify lead ---------------------------------------------
{
  const calls = [
    { tool: "search_leads", args: { query: "Müller Logistik" } },
    { tool: "get_lead", args: { id: "LEAD-014" } },
    { tool: "update_lead", args: { id: "LEAD-014", status: "Qualified" } },
  ];
  run({
    env: "crm-west", task: "TASK-001", start: "2026-03-15T09:02:11.408Z", pid: 48213, durationMs: 7311,
    calls,
    result: result({
      toolCalls: 3,
      agentOutput: "Lead LEAD-014 (Mueller Logistik) qualified.",
      checks: [
        check("LEAD-014 status is Qualified", true, "status: Qualified", true),
        check("follow-up task created", false, "no task references LEAD-014", true),
        check("no other leads modified", true, "", false),
      ],
    }),
    stateDiff: { scalars: [], collections: { leads: coll([], [], ["LEAD-014"]), auditLog: coll(["AUD-0001"]) } },
  });
  run({
    env: "crm-west", task: "TASK-001", start: "2026-03-16T09:41:27.052Z", pid: 51007, durationMs: 9120, newTrace: true,
    calls: [...calls, { tool: "create_task", args: { subject: "Send proposal", relatedTo: "LEAD-014", due: "2026-03-18" } }],
    result: result({
      toolCalls: 4,
      agentOutput:
        "Qualified lead LEAD-014 (Jürgen Müller, Müller Logistik GmbH): budget confirmed, decision expected in Q2. Follow-up task TSK-0001 due 2026-03-18.",
      checks: [
        check("LEAD-014 status is Qualified", true, "status: Qualified", true),
        check("follow-up task created", true, "TSK-0001 due 2026-03-18", true),
        check("no other leads modified", true, "", false),
      ],
    }),
    stateDiff: {
      scalars: [],
      collections: {
        leads: coll([], [], ["LEAD-014"]),
        tasks: coll(["TSK-0001"]),
        auditLog: coll(["AUD-0001", "AUD-0002"]),
      },
    },
  });
}

// ---- crm-west / TASK-002: update opportunity stages (object agentOutput) ----------
{
  const move = (id) => ({ tool: "update_opportunity", args: { id, stage: "Negotiation/Review" } });
  const list = { tool: "list_opportunities", args: { stage: "Proposal/Price Quote", owner: "USR-003" } };
  run({
    env: "crm-west", task: "TASK-002", start: "2026-03-14T16:20:45.771Z", pid: 40411, durationMs: 8034,
    calls: [list, move("OPP-005")],
    result: result({
      toolCalls: 2,
      agentOutput: {
        summary: "Moved 1 opportunity from Proposal/Price Quote to Negotiation/Review.",
        updatedOpportunities: [{ id: "OPP-005", from: "Proposal/Price Quote", to: "Negotiation/Review" }],
        skipped: [],
      },
      checks: [
        check("OPP-005 stage is Negotiation/Review", true, "stage: Negotiation/Review", true),
        check("OPP-006 stage is Negotiation/Review", false, "stage: Proposal/Price Quote", true),
        check("closed opportunities untouched", true, "", false),
        check("audit entries written", true, "1 entry", true),
      ],
    }),
    stateDiff: { scalars: [], collections: { opportunities: coll([], [], ["OPP-005"]), auditLog: coll(["AUD-0001"]) } },
  });
  // Crashed between writing run.json and result.json: no result, older than the next run.
  run({
    env: "crm-west", task: "TASK-002", start: "2026-03-15T14:05:09.330Z", pid: 44120, durationMs: 3518,
    calls: [list, move("OPP-005")],
    terminationReason: "agent_error",
    crash: "Model provider returned HTTP 529 (overloaded)",
    files: ["run.json", "trace.jsonl"],
  });
  run({
    env: "crm-west", task: "TASK-002", start: "2026-03-16T08:57:33.619Z", pid: 50522, durationMs: 10442, newTrace: true,
    calls: [list, move("OPP-005"), move("OPP-006")],
    result: result({
      toolCalls: 3,
      agentOutput: {
        summary: "Moved 2 opportunities from Proposal/Price Quote to Negotiation/Review; OPP-009 is Closed Won and was left alone.",
        updatedOpportunities: [
          { id: "OPP-005", from: "Proposal/Price Quote", to: "Negotiation/Review", amount: 42000 },
          { id: "OPP-006", from: "Proposal/Price Quote", to: "Negotiation/Review", amount: 18500.5 },
        ],
        skipped: ["OPP-009"],
        nextReview: "2026-03-23",
      },
      checks: [
        check("OPP-005 stage is Negotiation/Review", true, "stage: Negotiation/Review", true),
        check("OPP-006 stage is Negotiation/Review", true, "stage: Negotiation/Review", true),
        check("closed opportunities untouched", true, "", false),
        check("audit entries written", true, "2 entries", true),
      ],
    }),
    stateDiff: {
      scalars: [],
      collections: {
        opportunities: coll([], [], ["OPP-005", "OPP-006"]),
        auditLog: coll(["AUD-0001", "AUD-0002"]),
      },
    },
  });
}

// ---- crm-west / TASK-003: log a call (two runs in one second, names mis-sorted) ----
// pid 1295 = "zz", pid 1296 = "100". By name "_100" < "_zz", but "_zz" started first
// (.100Z) and "_100" started later (.900Z): the newest run is run_20260316101502_100.
{
  const calls = [
    { tool: "find_contact", args: { name: "Zoë Fernández" } },
    { tool: "log_activity", args: { type: "call", contact: "CON-031", minutes: 25, date: TODAY } },
  ];
  run({
    env: "crm-west", task: "TASK-003", start: "2026-03-16T10:15:02.100Z", pid: 1295, durationMs: 5210,
    calls,
    result: result({
      toolCalls: 2,
      agentOutput: "Logged a call with Zoe Fernandez (CON-031).",
      checks: [
        check("call activity logged for CON-031", true, "ACT-0001", true),
        check("call duration recorded", false, "duration missing", false),
        check("no duplicate activities", true, "", false),
      ],
    }),
    stateDiff: {
      scalars: [{ field: "stats.callsLogged", from: 12, to: 13 }],
      collections: { activities: coll(["ACT-0001"]), auditLog: coll(["AUD-0001"]) },
    },
  });
  run({
    env: "crm-west", task: "TASK-003", start: "2026-03-16T10:15:02.900Z", pid: 1296, durationMs: 6004, newTrace: true,
    calls: [...calls, { tool: "update_contact", args: { id: "CON-031", lastContacted: TODAY } }],
    result: result({
      toolCalls: 3,
      agentOutput:
        "Logged a 25-minute call ACT-0001 with Zoë Fernández (CON-031) 📞\nNext step: send renewal pricing by 2026-03-18.",
      checks: [
        check("call activity logged for CON-031", true, "ACT-0001", true),
        check("call duration recorded", true, "25 min", false),
        check("no duplicate activities", true, "", false),
      ],
    }),
    stateDiff: {
      scalars: [
        { field: "stats.callsLogged", from: 12, to: 13 },
        { field: "contacts.CON-031.lastContacted", to: TODAY }, // new field: no "from"
      ],
      collections: {
        contacts: coll([], [], ["CON-031"]),
        activities: coll(["ACT-0001"]),
        auditLog: coll(["AUD-0001", "AUD-0002"]),
      },
    },
  });
}

// ---- crm-west / TASK-004: merge duplicate contacts (newest run FAILS) --------------
{
  const merge = (from, into) => ({ tool: "merge_contacts", args: { source: from, target: into } });
  const find = { tool: "find_duplicate_contacts", args: { account: "ACC-007" } };
  run({
    env: "crm-west", task: "TASK-004", start: "2026-03-14T11:48:02.007Z", pid: 39102, durationMs: 60000,
    calls: Array.from({ length: 20 }, () => find),
    result: result({
      toolCalls: 20,
      terminationReason: "max_tool_calls",
      agentOutput: null,
      error: "Tool call limit reached (20 of 20)",
      checks: [
        check("CON-040 merged into CON-038", false, "CON-040 still present", true),
        check("CON-022 merged into CON-017", false, "CON-022 still present", true),
        check("opportunities re-assigned to surviving contact", false, "OPP-011 still references CON-022", false),
        check("no contacts outside the duplicate pairs removed", true, "", false),
      ],
    }),
    stateDiff: { scalars: [], collections: {} },
  });
  run({
    env: "crm-west", task: "TASK-004", start: "2026-03-15T11:30:40.512Z", pid: 43007, durationMs: 12873,
    calls: [find, merge("CON-040", "CON-038"), { tool: "reassign_opportunity", args: { id: "OPP-011", contact: "CON-017" } }, merge("CON-022", "CON-017")],
    result: result({
      toolCalls: 4,
      agentOutput: "Merged CON-040 into CON-038 and CON-022 into CON-017 (OPP-011 re-assigned first).",
      checks: [
        check("CON-040 merged into CON-038", true, "CON-040 removed; 3 activities moved", true),
        check("CON-022 merged into CON-017", true, "CON-022 removed", true),
        check("opportunities re-assigned to surviving contact", true, "OPP-011 -> CON-017", false),
        check("no contacts outside the duplicate pairs removed", true, "", false),
      ],
    }),
    stateDiff: {
      scalars: [{ field: "stats.contactCount", from: 58, to: 56 }],
      collections: {
        contacts: coll([], ["CON-040", "CON-022"], ["CON-038", "CON-017"]),
        opportunities: coll([], [], ["OPP-011"]),
        activities: coll([], [], ["ACT-0107", "ACT-0112", "ACT-0130"]),
        auditLog: coll(["AUD-0001", "AUD-0002", "AUD-0003"]),
      },
    },
  });
  run({
    env: "crm-west", task: "TASK-004", start: "2026-03-16T11:02:19.884Z", pid: 51990, durationMs: 11206, newTrace: true,
    calls: [
      find,
      merge("CON-040", "CON-038"),
      { ...merge("CON-022", "CON-017"), code: "conflict", error: "CON-022 still owns OPP-011; re-assign it first" },
      { tool: "get_contact", args: { id: "CON-022" } },
      { tool: "get_opportunity", args: { id: "OPP-011" } },
    ],
    result: result({
      toolCalls: 5,
      toolErrors: 1,
      agentOutput:
        "Merged CON-040 into CON-038. Could not merge CON-022 into CON-017: merge_contacts refused because CON-022 still owns OPP-011.",
      checks: [
        check("CON-040 merged into CON-038", true, "CON-040 removed; 3 activities moved", true),
        check("CON-022 merged into CON-017", false, "CON-022 still present", true),
        check("opportunities re-assigned to surviving contact", false, "OPP-011 still references CON-022", false),
        check("no contacts outside the duplicate pairs removed", true, "", false),
      ],
    }),
    stateDiff: {
      scalars: [{ field: "stats.contactCount", from: 58, to: 57 }],
      collections: {
        contacts: coll([], ["CON-040"], ["CON-038"]),
        activities: coll([], [], ["ACT-0107", "ACT-0112", "ACT-0130"]),
        auditLog: coll(["AUD-0001"]),
      },
    },
  });
}

// ---- crm-west / TASK-005: close-won forecast (hand-written verifier: 2/3) ---------
{
  const calls = [
    { tool: "list_opportunities", args: { stage: "Closed Won", closeDateFrom: "2026-01-01", closeDateTo: "2026-03-31" } },
    { tool: "list_opportunities", args: { stage: "Negotiation/Review", closeDateTo: "2026-03-31" } },
    { tool: "update_forecast", args: { period: "2026-Q1", closeWonTotal: 185000, confidence: 0.75 } },
  ];
  const checksOf = (confidence) => [
    check("forecast total is 185000", true, "closeWonTotal: 185000", true),
    check("all Closed Won opportunities of Q1 included", true, "OPP-002, OPP-005, OPP-012, OPP-015", true),
    check("forecast confidence at most 0.7", false, `confidence: ${confidence}`, false),
  ];
  run({
    env: "crm-west", task: "TASK-005", start: "2026-03-15T16:44:58.205Z", pid: 45871, durationMs: 8790,
    calls,
    result: result({
      toolCalls: 3,
      reward: 2 / 3,
      agentOutput: "Q1 forecast updated: $185,000 close-won.",
      checks: checksOf(0.8),
    }),
    stateDiff: {
      scalars: [
        { field: "forecast.closeWonTotal", from: 120000, to: 185000 },
        { field: "forecast.confidence", from: 0.5, to: 0.8 },
      ],
      collections: { forecasts: coll([], [], ["FC-2026-Q1"]), auditLog: coll(["AUD-0001"]) },
    },
  });
  run({
    env: "crm-west", task: "TASK-005", start: "2026-03-16T13:26:04.047Z", pid: 53330, durationMs: 9655, newTrace: true,
    calls,
    result: result({
      toolCalls: 3,
      reward: 2 / 3, // 0.6666666666666666
      agentOutput:
        "Q1 2026 close-won forecast (2026-01-01 to 2026-03-31): $185,000 across 4 opportunities (OPP-002, OPP-005, OPP-012, OPP-015). Commit $140,000 / best case $215,000.",
      checks: checksOf(0.75),
    }),
    stateDiff: {
      scalars: [
        { field: "forecast.closeWonTotal", from: 120000, to: 185000 },
        { field: "forecast.confidence", from: 0.5, to: 0.75 },
        { field: "forecast.asOf", to: TODAY }, // new field: no "from"
      ],
      collections: { forecasts: coll([], [], ["FC-2026-Q1"]), auditLog: coll(["AUD-0001"]) },
    },
  });
}

// ---- crm-east / TASK-001: its own "qualify lead" (same task id, other environment) -
{
  const calls = [
    { tool: "get_lead", args: { id: "LEAD-003" } },
    { tool: "update_lead", args: { id: "LEAD-003", status: "Qualified", rating: "Hot" } },
  ];
  const checks = (ok) => [
    check("LEAD-003 status is Qualified", true, "status: Qualified", true),
    check("LEAD-003 rating is Hot", ok, ok ? "rating: Hot" : "rating: Warm", true),
    check("owner assigned", ok, ok ? "USR-011" : "", true),
  ];
  run({
    env: "crm-east", task: "TASK-001", start: "2026-03-15T10:12:36.940Z", pid: 44501, durationMs: 5833,
    calls: [calls[0], { tool: "update_lead", args: { id: "LEAD-003", status: "Qualified" } }],
    result: result({
      toolCalls: 2,
      agentOutput: "LEAD-003 qualified.",
      checks: checks(false), // reward 0.33
    }),
    stateDiff: { scalars: [], collections: { leads: coll([], [], ["LEAD-003"]), auditLog: coll(["AUD-0001"]) } },
  });
  run({
    env: "crm-east", task: "TASK-001", start: "2026-03-16T09:12:50.318Z", pid: 50871, durationMs: 7416, newTrace: true,
    calls: [...calls, { tool: "assign_owner", args: { id: "LEAD-003", owner: "USR-011" } }],
    result: result({
      toolCalls: 3,
      agentOutput: "Qualified LEAD-003 (Østergaard Shipping ApS) as Hot and assigned it to Søren Ødegård (USR-011). ✅",
      checks: checks(true),
    }),
    stateDiff: {
      scalars: [{ field: "pipeline.qualifiedLeads", from: 7, to: 8 }],
      collections: { leads: coll([], [], ["LEAD-003"]), auditLog: coll(["AUD-0001", "AUD-0002"]) },
    },
  });
}

// ---- crm-west / TASK-006: correct a deal amount (the tool path is baselined) --------
// The older run is from an older Silo (no run_start, no callId); the newest from a newer
// one. Tool outputs hold simulated ERP date-times (invoiceDate), far from the runs'
// wall clock, so they are not volatile.
{
  const invoice = {
    tool: "get_invoice",
    args: { id: "INV-2026-0042" },
    output: { id: "INV-2026-0042", deal: "DEAL-7", invoiceDate: "2026-03-02T09:30:00.000Z", total: 14000, currency: "EUR" },
  };
  const search = { tool: "search_deals", args: { account: "ACC-007", stage: "Closed Won" }, output: { deals: [{ id: "DEAL-7", amount: 140000 }] } };
  const checks = (ok) => [
    check("DEAL-7 amount matches invoice INV-2026-0042", ok, ok ? "amount: 14000" : "amount: 140000", true),
    check("no other deals modified", true, "", false),
  ];
  run({
    env: "crm-west", task: "TASK-006", start: "2026-03-15T15:10:42.118Z", pid: 45020, durationMs: 6120,
    calls: [
      search,
      { tool: "list_invoices", output: { invoices: ["INV-2026-0042"] } }, // no input: the key is left out
      { tool: "delete_deal", args: { id: "DEAL-7" }, code: "tool_not_found", error: "Unknown tool: delete_deal" },
    ],
    result: result({
      toolCalls: 3,
      toolErrors: 1,
      agentOutput: "Could not correct DEAL-7.",
      checks: checks(false),
    }),
    stateDiff: { scalars: [], collections: {} },
  });
  run({
    env: "crm-west", task: "TASK-006", start: "2026-03-16T14:03:27.604Z", pid: 53871, durationMs: 8450, newTrace: true,
    calls: [
      search,
      invoice,
      {
        tool: "update_deal",
        args: { id: "DEAL-7", amount: "14000" },
        code: "invalid_input",
        error: "Invalid input for update_deal",
        details: { problems: ["amount: expected number, received string"] },
      },
      { tool: "update_deal", args: { id: "DEAL-7", amount: 14000 }, output: { id: "DEAL-7", amount: 14000, updatedOn: TODAY } },
    ],
    result: result({
      toolCalls: 4,
      toolErrors: 1,
      agentOutput: "DEAL-7 amount corrected from 140000 to 14000 (EUR), per invoice INV-2026-0042 of 2026-03-02.",
      checks: checks(true),
    }),
    stateDiff: {
      scalars: [],
      collections: { deals: coll([], [], ["DEAL-7"]), auditLog: coll(["AUD-0001"]) },
    },
  });
}

// --- write ----------------------------------------------------------------------------

rmSync(RUNS_DIR, { recursive: true, force: true });
mkdirSync(RUNS_DIR, { recursive: true });

for (const r of RUNS) {
  const startMs = Date.parse(r.start);
  const id = runId(startMs, r.pid);
  const dir = join(RUNS_DIR, id);
  mkdirSync(dir);
  const files = r.files ?? ["run.json", "result.json", "state-diff.json", "trace.jsonl"];
  const terminationReason = r.terminationReason ?? r.result.terminationReason;
  if (files.includes("run.json")) {
    writeJson(join(dir, "run.json"), {
      runId: id,
      environment: r.env,
      taskId: r.task,
      startedAt: iso(startMs),
      finishedAt: iso(startMs + r.durationMs),
      durationMs: r.durationMs,
      terminationReason,
      toolCallCount: r.result ? r.result.toolCalls : r.calls.length,
    });
  }
  if (files.includes("result.json")) writeJson(join(dir, "result.json"), r.result);
  if (files.includes("state-diff.json")) writeJson(join(dir, "state-diff.json"), r.stateDiff);
  if (files.includes("trace.jsonl")) {
    writeJsonl(
      join(dir, "trace.jsonl"),
      trace(startMs, r.durationMs, r.calls, {
        task: r.task,
        result: r.result ?? null,
        end: r.crash ? null : terminationReason,
        newTrace: Boolean(r.newTrace),
        crash: r.crash ?? null,
      }),
    );
  }
}

// A crash right after the directory was created: nothing inside. (git cannot store an
// empty directory; re-run this script to get it back after a clone.)
mkdirSync(join(RUNS_DIR, runId(Date.parse("2026-03-15T08:30:00.000Z"), 47000)));

// A rollout killed mid-way: only the trace, no run.json, so it names no task.
{
  const startMs = Date.parse("2026-03-15T12:00:07.655Z");
  const dir = join(RUNS_DIR, runId(startMs, 47311));
  mkdirSync(dir);
  writeJsonl(
    join(dir, "trace.jsonl"),
    trace(startMs, 4000, [{ tool: "list_opportunities", args: { stage: "Prospecting" } }]),
  );
}

// A foreign file in the runs directory.
writeFileSync(
  join(RUNS_DIR, "notes.txt"),
  "Scratch notes, not a run. silo-regress must skip files that are not run directories.\n",
  "utf8",
);

console.log(`wrote ${RUNS.length + 2} run directories and notes.txt to ${RUNS_DIR}`);
