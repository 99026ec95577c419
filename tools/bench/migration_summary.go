package bench

// MigrationSummary is one migration contender over every round: medians of its correct runs.
type MigrationSummary struct {
	Contender, Label string
	Parallel         int
	// Runs are the contender's runs, OK the correct ones the medians are over.
	Runs, OK int
	// Wall, SourceCPU, TargetCPU and ClientCPU are medians in seconds; MsgsPerSec is the
	// messages over the median wall time.
	Wall, SourceCPU, TargetCPU, ClientCPU float64
	MsgsPerSec                            float64
	// Plan is the median standalone plan of the apply's configuration (0: none timed), of
	// PlanQueues queues, over Plans plans.
	Plan       float64
	PlanQueues int
	Plans      int
}

// SummarizeMigration gives each contender's medians over its correct runs, the contenders in the
// order they first ran.
func SummarizeMigration(runs []MigrationRun) []MigrationSummary {
	var out []MigrationSummary
	index := map[string]int{}
	type samples struct {
		wall, src, tgt, client, plan []float64
		messages                     int64
	}
	var all []samples
	for _, r := range runs {
		i, ok := index[r.Contender]
		if !ok {
			i = len(out)
			index[r.Contender] = i
			out = append(out, MigrationSummary{Contender: r.Contender, Label: r.Label, Parallel: r.Parallel})
			all = append(all, samples{})
		}
		s := &out[i]
		s.Runs++
		if r.PlanSeconds > 0 {
			all[i].plan = append(all[i].plan, r.PlanSeconds)
			s.PlanQueues = r.PlanQueues
		}
		if !r.OK || r.Process.WallSeconds <= 0 {
			continue
		}
		s.OK++
		all[i].wall = append(all[i].wall, r.Process.WallSeconds)
		all[i].src = append(all[i].src, r.SourceCPU)
		all[i].tgt = append(all[i].tgt, r.TargetCPU)
		all[i].client = append(all[i].client, r.Process.CPUSeconds)
		all[i].messages = r.Messages // every run moves the same layout
	}
	for i := range out {
		s, a := &out[i], all[i]
		s.Wall, s.SourceCPU, s.TargetCPU, s.ClientCPU = Median(a.wall), Median(a.src), Median(a.tgt), Median(a.client)
		s.Plan, s.Plans = Median(a.plan), len(a.plan)
		if s.Wall > 0 {
			s.MsgsPerSec = float64(a.messages) / s.Wall
		}
	}
	return out
}

// migrationHeadline picks our apply's summary and the loop's whose median wall time is lowest,
// among contenders with a correct run; either is nil when there is none.
func migrationHeadline(sums []MigrationSummary) (ours, fastest *MigrationSummary) {
	for i := range sums {
		s := &sums[i]
		if s.OK == 0 {
			continue
		}
		switch {
		case s.Contender == MigrationApply:
			ours = s
		case fastest == nil || s.Wall < fastest.Wall:
			fastest = s
		}
	}
	return ours, fastest
}
