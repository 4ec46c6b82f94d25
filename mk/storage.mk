# Storage (engine/storage and its backends).
#   make full-disk   the real full-disk test: an 8 MiB tmpfs filled to the last byte, then
#                    freed; writes must resume within 5 s, nothing acknowledged lost (D4).
#                    Root only (it mounts the tmpfs).

.PHONY: full-disk

full-disk:
	DSD_FULL_DISK_TEST=1 $(GO) test -count=1 -run '^TestFullDiskRecovers$$' -v ./engine/
