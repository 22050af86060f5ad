package nexmark

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

func fields(cols ...arrow.Field) *arrow.Schema { return arrow.NewSchema(cols, nil) }

func col(name string, dt arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: dt, Nullable: true}
}

// The Nexmark schemas (the column names of the Flink Nexmark DDL); money
// is in cents, timestamps are microseconds (UTC).
var (
	// PersonSchema: id, name, emailAddress, creditCard, city, state,
	// dateTime, extra.
	PersonSchema = fields(col("id", vector.Int64), col("name", vector.String), col("emailAddress", vector.String),
		col("creditCard", vector.String), col("city", vector.String), col("state", vector.String),
		col("dateTime", vector.Timestamp), col("extra", vector.String))
	// AuctionSchema: id, itemName, description, initialBid, reserve,
	// dateTime, expires, seller, category, extra.
	AuctionSchema = fields(col("id", vector.Int64), col("itemName", vector.String), col("description", vector.String),
		col("initialBid", vector.Int64), col("reserve", vector.Int64), col("dateTime", vector.Timestamp),
		col("expires", vector.Timestamp), col("seller", vector.Int64), col("category", vector.Int64), col("extra", vector.String))
	// BidSchema: auction, bidder, price, channel, url, dateTime, extra.
	BidSchema = fields(col("auction", vector.Int64), col("bidder", vector.Int64), col("price", vector.Int64),
		col("channel", vector.String), col("url", vector.String), col("dateTime", vector.Timestamp), col("extra", vector.String))
)

var (
	usStates    = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities    = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames  = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames   = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
)
