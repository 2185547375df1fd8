# Runs the rest of the test file in a network namespace of its own
# (unshare -rn): the examples' addresses (192.168.7.2, the fixed ports of
# a probe's servers on localhost) are its own, whatever else runs on this
# machine. Source it before lib.sh.
if [ -z "$CP_IN_NETNS" ]; then
    if ! unshare -rn true 2>/dev/null; then
        echo "not ok 1 - a network namespace of its own (unshare -rn) for the examples' addresses"
        exit 1
    fi
    CP_IN_NETNS=1
    export CP_IN_NETNS
    exec unshare -rn sh "$0" "$@"
fi
ip link set lo up && ip addr add 192.168.7.2/32 dev lo ||
    echo "not ok - loopback with 192.168.7.2 in the namespace"
