// Parses schedules as Knative Eventing's PingSource webhook does (robfig/cron v3 with
// SecondOptional|Minute|Hour|Dom|Month|Dow|Descriptor, @every refused, spec.timezone as CRON_TZ=)
// and prints, per input line "<timezone>\t<schedule>", either "ok" and the next firings after a
// fixed start, or "error" and the parser's message. test/integration/cron-schedules.test.ts runs it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

type result struct {
	Schedule string   `json:"schedule"`
	Error    string   `json:"error,omitempty"`
	Next     []string `json:"next,omitempty"`
}

func main() {
	start, _ := time.Parse(time.RFC3339, os.Args[1])
	count := 40
	parser := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		tz, schedule, _ := strings.Cut(in.Text(), "\t")
		r := result{Schedule: schedule}
		spec := schedule
		if tz != "" {
			spec = "CRON_TZ=" + tz + " " + schedule
		}
		if strings.Contains(schedule, "@every") {
			r.Error = "unsupported descriptor @every"
		} else if s, err := parser.Parse(spec); err != nil {
			r.Error = err.Error()
		} else {
			t := start
			for i := 0; i < count; i++ {
				t = s.Next(t)
				r.Next = append(r.Next, t.UTC().Format(time.RFC3339))
			}
		}
		if err := out.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
