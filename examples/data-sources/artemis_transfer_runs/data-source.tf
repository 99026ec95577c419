# Who moved what out of orders.dlq, when, and how each run ended. Needs ledger_dsn in the
# provider block (or ARTEMIS_LEDGER_DSN).
data "artemis_transfer_runs" "orders_dlq" {
  source_broker = "dc1"
  source_queue  = "orders.dlq"
  limit         = 20
}

output "orders_dlq_runs" {
  value = [for r in data.artemis_transfer_runs.orders_dlq.runs : {
    run     = r.run_id
    by      = "${r.created_by_user}@${r.created_by_host} (${r.terraform_workspace})"
    started = r.t0
    status  = r.status
    relayed = r.relayed
    events  = [for e in r.events : "${e.at} ${e.kind}"]
  }]
}

# Runs that stopped before the end and can be resumed by applying their transfer again.
data "artemis_transfer_runs" "interrupted" {
  status = "interrupted"
}
