// Runs the upstream conformance suite against DS_BASE_URL (subscriptions stay off).
import { runConformanceTests } from "@durable-streams/server-conformance-tests"

const baseUrl = process.env.DS_BASE_URL
if (!baseUrl) throw new Error("DS_BASE_URL is required")
runConformanceTests({ baseUrl, subscriptions: false, longPollTimeoutMs: Number(process.env.DS_LONGPOLL_MS || 500) })
