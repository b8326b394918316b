package demosite

import "strings"

// The demo's articles. All text here was written for this project.

type article struct {
	slug  string
	title string
	paras []string
}

var riverCleanup = article{
	slug:  "river-cleanup",
	title: "Volunteers pull two tonnes of rubbish from the Wend",
	paras: []string{
		"More than three hundred volunteers spent Saturday morning wading through the shallows of the river Wend, pulling out shopping trolleys, tyres, fishing line and an astonishing number of plastic bottles. By noon the organisers had weighed just over two tonnes of rubbish on a borrowed farm scale beside the old mill bridge.",
		"The clean-up started six years ago as a small effort by a rowing club whose members were tired of untangling plastic bags from their oars. It has since grown into the largest single volunteer event in the valley, drawing families, school groups and a surprising number of retired engineers who bring their own waders.",
		"Organisers said the most common item this year was the disposable coffee cup lid, followed by cigarette filters and the small foil wrappers used for sweets. Larger finds included a bicycle frame, two road signs and a wooden rowing seat that the club believes it lost in a storm four winters ago.",
		"Ecologists from the regional water authority used the day to survey the banks. They reported more kingfisher burrows than in any previous year and a healthy population of freshwater shrimp below the weir, which they take as a sign that water quality is slowly improving after the sewage overflows were repaired.",
		"The council has promised to install three new bins along the towpath and to empty them twice a week during the summer. Volunteers will meet again in October to clear the lower reaches before the autumn floods carry the rubbish out to the estuary.",
	},
}

var libraryHours = article{
	slug:  "library-hours",
	title: "Central library to open on Sunday afternoons from March",
	paras: []string{
		"The central library will open its doors on Sunday afternoons for the first time in more than a decade, the county announced on Tuesday. From the first weekend of March the reading rooms, the children's floor and the local history archive will be open from one until five.",
		"Librarians said the change answers the most frequent request in last year's survey, in which students preparing for exams and parents with young children both asked for quiet space at the weekend. Weekday evening hours will be trimmed slightly on Mondays to pay for the extra shifts.",
		"The archive, which holds parish records, maps and photographs going back three centuries, has been among the busiest parts of the building since family history programmes became popular on television. Staff expect long queues for the microfilm readers and have asked visitors to book a slot online.",
		"A pilot scheme will also lend tools, sewing machines and musical instruments from a new room on the ground floor. The collection started with donations from residents and already includes a cello, two drills and a bread maker that has been borrowed every week since it arrived.",
		"Union representatives welcomed the plan but said it must be staffed by paid librarians rather than volunteers. The county said every Sunday shift would be voluntary for existing staff and paid at the weekend rate.",
	},
}

var marketPrices = article{
	slug:  "market-prices",
	title: "Cold spring pushes up vegetable prices at the covered market",
	paras: []string{
		"Traders at the covered market say a cold and late spring has pushed the price of early vegetables to the highest level they can remember. Asparagus, new potatoes and spring onions arrived weeks behind schedule, and growers have passed the cost of heated greenhouses on to wholesalers.",
		"One greengrocer, whose family has held the same corner stall since the market opened, said customers were switching to frozen peas and tinned tomatoes while they waited for local crops to recover. Sales of root vegetables kept through the winter have held up better than expected.",
		"Economists at the university caution that a single season says little about longer trends, but they note that the number of small growers supplying the market has fallen by a third in ten years. Fewer suppliers, they argue, leave prices more exposed to a bad run of weather.",
		"The market's managers are trying to help by cutting stall fees for farmers who sell their own produce directly. Four new growers have signed up for the summer season, including a cooperative that grows salad leaves under glass on the edge of the city.",
		"Shoppers hoping for relief may have to wait until June, when outdoor crops usually reach the stalls in quantity and prices tend to fall sharply within a few weeks.",
	},
}

// teaGarden is Chinese text written for this project: a short news story
// about a tea garden opening to visitors.
var teaGarden = article{
	slug:  "tea-garden",
	title: "山区茶园首次向游客开放",
	paras: []string{
		"本周六，位于县城以北四十公里的高山茶园首次向游客开放。茶园负责人介绍，园区种植绿茶和红茶共三百多亩，海拔超过一千米，常年云雾缭绕，适合茶树生长。",
		"开放首日吸引了近两千名游客，许多家庭带着孩子体验采茶和制茶。工作人员现场演示了杀青、揉捻和烘干等传统工序，游客可以把自己亲手制作的茶叶带回家。",
		"当地政府表示，茶园开放是乡村旅游规划的一部分，今后还将修建步行道、观景台和民宿，帮助村民增加收入。附近村庄已有三十多户人家报名参加民宿培训。",
		"茶园所在的村子过去以种植玉米和土豆为主，收入不高，年轻人大多外出打工。十年前，村里请来农业技术人员，在向阳的山坡上试种茶树，第一批茶叶就在省里的评比中获得了奖项。",
		"如今，全村有一百二十多户人家参与茶叶种植和加工，合作社统一收购鲜叶，统一包装销售。负责人说，开放参观以后，游客可以直接在茶园购买新茶，价格比网上便宜，村民也省去了运输成本。",
		"不少游客表示，山里空气清新，茶园风景优美，很适合周末带家人来放松。一位来自省城的游客说，孩子第一次看到茶叶是怎样从树上变成杯中的茶，觉得非常新鲜，下次还想再来。",
		"专家提醒，山区道路狭窄，周末车流量较大，游客应尽量乘坐县城开出的旅游专线巴士，并注意天气变化，雨天山路湿滑，需要穿防滑鞋。",
	},
}

// teaGardenRepost is teaGarden as another site reposts it: same title,
// one phrase dropped, another template around it.
var teaGardenRepost = func() article {
	a := teaGarden
	a.paras = append([]string(nil), teaGarden.paras...)
	a.paras[0] = strings.Replace(a.paras[0], "常年云雾缭绕，", "", 1)
	return a
}()
