//go:build race

package extract

// raceEnabled is true under -race, which slows the code several times over.
const raceEnabled = true
