// Runs the upstream conformance suite against DS_BASE_URL; DS_SUBSCRIPTIONS=1 turns its
// six subscription tests on (the server must accept loopback webhook URLs).
import { runConformanceTests } from "@durable-streams/server-conformance-tests"

const baseUrl = process.env.DS_BASE_URL
if (!baseUrl) throw new Error("DS_BASE_URL is required")
runConformanceTests({ baseUrl, subscriptions: process.env.DS_SUBSCRIPTIONS === "1", longPollTimeoutMs: Number(process.env.DS_LONGPOLL_MS || 500) })
