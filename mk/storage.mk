# Storage (engine/storage and its backends).
#   make full-disk   the real full-disk test: an 8 MiB tmpfs filled to the last byte, then
#                    freed; writes must resume within 5 s, nothing acknowledged lost (D4).
#                    Root only (it mounts the tmpfs).
#   make jetstream-backend  the engine, difftest and linearizability tests on engine/jsstore
#                    (a 3-node in-process JetStream cluster, sync always), about 80 s.

.PHONY: full-disk full-disk-if-root jetstream-backend

## full-disk-if-root: make full-disk where it can mount (root, as in CI), else say why not.
full-disk-if-root:
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) --no-print-directory full-disk; \
	  else echo "full-disk: skipped: mounting its tmpfs needs root (run make full-disk as root)"; fi

jetstream-backend:
	DSD_TEST_BACKEND=jetstream $(GO) test -count=1 -timeout $(TIMEOUT) ./engine/ ./difftest/ ./linearizability/

full-disk:
	DSD_FULL_DISK_TEST=1 $(GO) test -count=1 -run '^TestFullDiskRecovers$$' -v ./engine/
