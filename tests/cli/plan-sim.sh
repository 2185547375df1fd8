# Shared by t0621-plan-sim-demo.sh and t0622-plan-sim-generated.sh (sourced
# after lib.sh and need_demo): plan and sim --layout run the same cache
# model, so the figure plan gives for its layout is what sim measures with
# it, under every replacement policy and for every strategy.

# plan_sim_policy TRACE SPEC BUDGET: every strategy plans TRACE for the
# cache SPEC (from the project root, where the map's objects resolve and
# the stubs are in ld's order); sim measures each layout; the misses and
# the instructions (stubs' included) per warm iteration are the same.
plan_sim_policy() {
    here=$PWD
    for st in hotblock colour ram combined rank density; do
        case $st in hotblock|colour) b= ;; *) b="--budget $3" ;; esac
        (cd "$CP_ROOT" && $CODEPLACE plan $ELF --map $MAP --trace "$1" \
            --target rp2040 --cache $2 --cache-seed 5 --strategy $st $b \
            --search-moves 30 --descent-passes 0 --time 0 \
            --layout "$here/$st.layout" --json -q -o "$here/$st.json") || return 1
        $CODEPLACE sim "$1" --elf $ELF --map $MAP --target rp2040 --cache $2 \
            --seed 5 --layout $st.layout --json -q -o $st-sim.json || return 1
        python3 - $st.json $st-sim.json <<-\EOF || return 1
	import json, sys
	p = json.load(open(sys.argv[1]))["results"][0]
	s = json.load(open(sys.argv[2]))["warm"]
	ins = s["sum"]["instructions"] / s["iterations"]
	print(p["strategy"], p["misses_per_iteration"], s["misses_mean"],
	      p["instructions_per_iteration"], round(ins, 1))
	assert abs(p["misses_per_iteration"] - s["misses_mean"]) < 1e-6, "misses"
	assert abs(p["instructions_per_iteration"] - ins) < 0.051, "instructions"
	EOF
    done
}
