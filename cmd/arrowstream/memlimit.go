package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// defaultMemoryLimit is --memory-limit's default: three quarters of the
// machine's memory or of the cgroup's limit, whichever is smaller (0 when
// neither can be read: no limit).
func defaultMemoryLimit() int64 {
	total := memTotal()
	if cg := cgroupLimit(); cg > 0 && (total == 0 || cg < total) {
		total = cg
	}
	return total / 4 * 3
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// cgroupLimit reads the cgroup v2 memory limit, in bytes (0: none).
func cgroupLimit() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0 // "max"
	}
	return n
}
