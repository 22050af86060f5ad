package nexmark

import "slices"

// q6: average selling price per seller over their last 10 closed
// auctions. The streaming query is q4's closing price per auction (the
// maximum bid within the auction's lifetime, emitted when the watermark
// passes its closing time), then Arrowstream's streaming OVER (beyond
// Spark, docs/semantics.md §5.6): each closed auction gets the average of
// its seller's last 11 closing prices, itself included, in closing-time
// order. README.md lists the deviations from Nexmark's query.
var q6Query = query{name: "q6", title: "average selling price per seller, last 10 closed auctions (join, aggregation, streaming OVER)",
	sql: `SELECT seller, id, expires, final,
       avg(final) OVER (PARTITION BY seller ORDER BY expires, id ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price
FROM (SELECT A.id, A.seller, A.expires, max(B.price) AS final
      FROM STREAM auction WATERMARK expires DELAY OF INTERVAL 1 SECOND AS A
      JOIN STREAM bid ` + wm + ` AS B
        ON A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
      GROUP BY A.id, A.seller, A.expires)`,
	newPeer: func() peer { return newQ6Peer() }}

// q6Peer is q4's peer by seller: the closing price of every auction, then
// per seller the running average over the last 11 closed auctions.
type q6Peer struct{ closingPrices }

func newQ6Peer() *q6Peer { return &q6Peer{newClosingPrices(aSeller)} }

// answer: every auction closed by the final watermark with its seller's
// average over it and the 10 closed before it (by closing time, then id).
func (p *q6Peer) answer() []string {
	w := p.watermark()
	type closed struct{ id, expires, final int64 }
	bySeller := map[int64][]closed{}
	for id, a := range p.auctions {
		if a.matched && a.expires <= w {
			bySeller[a.group] = append(bySeller[a.group], closed{id, a.expires, a.final})
		}
	}
	var rows []string
	for seller, cs := range bySeller {
		slices.SortFunc(cs, func(x, y closed) int {
			if x.expires != y.expires {
				return int(x.expires - y.expires)
			}
			return int(x.id - y.id)
		})
		for i, c := range cs {
			sum := int64(0)
			frame := cs[max(0, i-10) : i+1]
			for _, f := range frame {
				sum += f.final
			}
			rows = append(rows, row(fmtInt(seller), fmtInt(c.id), fmtInt(c.expires), fmtInt(c.final),
				fmtFloat(float64(sum)/float64(len(frame)))))
		}
	}
	return sorted(rows)
}
