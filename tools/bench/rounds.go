package bench

// rotatedRounds is the order contenders run in when each runs reps times: reps rounds, each
// holding every contender once, the order rotated by one each round, so that no contender always
// runs first (on the freshest journal and the coolest machine) or always last.
func rotatedRounds[T any](contenders []T, reps int) [][]T {
	if len(contenders) == 0 || reps < 1 {
		return nil
	}
	rounds := make([][]T, reps)
	for r := range rounds {
		round := make([]T, len(contenders))
		for i := range contenders {
			round[i] = contenders[(i+r)%len(contenders)]
		}
		rounds[r] = round
	}
	return rounds
}
