# The prelude a session's next.sh sources (sixty-sixth session on): the card and its tag (h200, else h100), $OUT
# packed into one all.tgz when the outermost step exits (the device returns few files), and `left S`: whether a
# piece of S seconds still fits in LEFT_S (default 600), counted from the script's start.
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
pack() { tar czf /tmp/all-$$.tgz -C $OUT . && (cd $OUT && find . -mindepth 1 -delete) && mv /tmp/all-$$.tgz $OUT/all.tgz; }
[[ ${PACKED:-} ]] || { export PACKED=1; trap pack EXIT; }  # the outermost step packs
left() { (( SECONDS + $1 < ${LEFT_S:-600} )); }
